#!/usr/bin/env bash
# mmdebstrap --customize-hook of hack/image/build.sh: installs karta into the root filesystem ROOT
# (before mmdebstrap packs it). Arguments: ROOT WORK VERSION PASSWD_LINE GROUP_LINE HOME.
# WORK holds dist/ (karta's wheel) and requirements.txt (the pinned dependencies, with hashes).
# The packages go to ROOT/usr/local/lib/pythonX.Y/dist-packages (on the sys.path of Debian's
# python3), the console scripts to ROOT/usr/local/bin with #!/usr/bin/python3; the bytecode is
# compiled by the rootfs's own Python, hash-based (no source mtimes in it).
set -euo pipefail
root=$1 work=$2 version=$3 passwd_line=$4 group_line=$5 home=$6
python=${PYTHON:-python3}

in_root() { chroot "$root" /usr/bin/python3 "$@"; }
py=$(in_root -c 'import sys; print("%d.%d" % sys.version_info[:2])')
glibc=$(in_root -c 'import platform; print(platform.libc_ver()[1])')
machine=$(in_root -c 'import platform; print(platform.machine())')
[ "$py" = 3.11 ] && [ "$glibc" = 2.36 ] && [ "$machine" = x86_64 ] || {
  echo "customize.sh: the rootfs has Python $py, glibc $glibc on $machine; hack/image/requirements.txt" \
    "is locked for Python 3.11, glibc 2.36, x86_64 (update hack/image/lock.sh)" >&2
  exit 2
}
platforms=()
for minor in $(seq "${glibc#2.}" -1 17); do platforms+=(--platform "manylinux_2_${minor}_${machine}"); done
platforms+=(--platform "manylinux2014_${machine}")

site="/usr/local/lib/python$py/dist-packages"
# pip runs on the build host but installs for the rootfs's Python, libc and machine (wheels only):
# the pinned dependencies (hashes checked), and karta's wheel by name from dist/ (no index, so no
# other version can be taken, and no direct URL is recorded). Only karta's console scripts go to
# /usr/local/bin (a dependency's, such as cffi's cffi-gen-src, is a build tool).
target=(--quiet --disable-pip-version-check --no-compile --no-deps --only-binary=:all:
  --python-version "$py" --implementation cp --abi "cp${py/./}" "${platforms[@]}")
"$python" -m pip install "${target[@]}" --target "$work/deps" --require-hashes -r "$work/requirements.txt"
"$python" -m pip install "${target[@]}" --target "$work/karta" --no-index --find-links "$work/dist" "karta==$version"
mkdir -p "$root$site" "$root/usr/local/bin"
for script in "$work"/karta/bin/*; do
  # pip wrote the shebang of the Python that ran it; the image's is /usr/bin/python3
  { echo '#!/usr/bin/python3'; tail -n +2 "$script"; } > "$root/usr/local/bin/$(basename "$script")"
  chmod 0755 "$root/usr/local/bin/$(basename "$script")"
done
rm -rf "$work/deps/bin" "$work/karta/bin"
cp -a "$work/deps/." "$work/karta/." "$root$site/"
chown -R 0:0 "$root$site" "$root/usr/local/bin"
in_root -m compileall -q -j 1 --invalidation-mode unchecked-hash "$site"

# The non-root user the image runs as.
echo "$passwd_line" >> "$root/etc/passwd"
echo "$group_line" >> "$root/etc/group"
install -d -m 0755 -o 65532 -g 65532 "$root$home"

# Files mmdebstrap copies from the build host: the container runtime provides its own.
rm -f "$root/etc/resolv.conf" "$root/etc/hostname"
