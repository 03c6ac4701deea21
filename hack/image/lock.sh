#!/usr/bin/env bash
# Pins the container image's Python dependencies: resolves the [project] dependencies of
# pyproject.toml for the image's Python (Debian bookworm's CPython 3.11, glibc 2.36, x86_64) from
# binary wheels only, and writes hack/image/requirements.txt with one `name==version` line and the
# sha256 of the wheel for each package. hack/image/build.sh and the Containerfile install exactly
# these files (pip --require-hashes). It also pins the build backend that makes karta's wheel
# ([build-system] requires) in hack/image/build-constraints.txt (its version is written into the
# wheel's metadata, so it is part of the image). Run it after changing the dependencies, then
# commit the result; tests/unit/test_image_build.py checks that every dependency is pinned.
#
# Environment: PYTHON (default python3), a Python with pip, used only to run pip.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
python=${PYTHON:-python3}
# The image's interpreter and libc (hack/image/build.sh checks the rootfs has exactly these).
py_version=3.11
glibc_minor=36
arch=x86_64

platforms=()
for minor in $(seq "$glibc_minor" -1 17); do platforms+=(--platform "manylinux_2_${minor}_${arch}"); done
platforms+=(--platform "manylinux2014_${arch}")

mapfile -t deps < <("$python" -c '
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' "$repo/pyproject.toml")

wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
"$python" -m pip download --quiet --disable-pip-version-check --dest "$wheels" --only-binary=:all: \
  --python-version "$py_version" --implementation cp --abi "cp${py_version/./}" "${platforms[@]}" "${deps[@]}"

{
  echo "# The container image's Python dependencies (CPython $py_version, manylinux glibc 2.$glibc_minor, $arch),"
  echo "# written by hack/image/lock.sh from pyproject.toml: do not edit by hand."
  for wheel in "$wheels"/*.whl; do
    file=$(basename "$wheel")
    name=${file%%-*}
    rest=${file#*-}
    version=${rest%%-*}
    echo "${name//_/-}==$version --hash=sha256:$(sha256sum "$wheel" | cut -d' ' -f1)"
  done | LC_ALL=C sort -f
} > "$here/requirements.txt"
echo "lock.sh: wrote $here/requirements.txt ($(grep -c '==' "$here/requirements.txt") packages)" >&2

mapfile -t backend < <("$python" -c '
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]))' "$repo/pyproject.toml")
rm -rf "${wheels:?}"/*
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --dest "$wheels" --only-binary=:all: "${backend[@]}"
{
  echo "# The build backend of karta's wheel in the container image (pip constraints; PIP_CONSTRAINT),"
  echo "# written by hack/image/lock.sh from pyproject.toml: do not edit by hand."
  for wheel in "$wheels"/*.whl; do
    file=$(basename "$wheel")
    rest=${file#*-}
    echo "${file%%-*}==${rest%%-*}"
  done | LC_ALL=C sort -f
} > "$here/build-constraints.txt"
echo "lock.sh: wrote $here/build-constraints.txt" >&2
