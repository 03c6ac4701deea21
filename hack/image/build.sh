#!/usr/bin/env bash
# Builds the karta container image reproducibly, without pulling a base image: a root filesystem
# made by mmdebstrap from Debian bookworm packages (the Essential set, python3 and ca-certificates),
# karta's wheel (built from the committed tree, `git archive HEAD`) and its pinned dependencies
# (hack/image/requirements.txt, hashes checked) installed into it with the rootfs's Python, user
# 65532, packed as one layer by umoci into an OCI image layout, and copied by skopeo into a
# docker-archive tar (for `docker load` / `podman load`).
#
# Reproducible: every timestamp is SOURCE_DATE_EPOCH (default: the commit time of HEAD), the
# layer tar is sorted with mtimes clamped (mmdebstrap), the bytecode is hash-based, and the image
# config is fixed; two builds of one commit against the same Debian mirror state give the same
# digests. The Containerfile at the top of the repository builds the equivalent image from
# debian:bookworm-slim for those with a registry (tests/unit/test_image_build.py keeps the two in
# step).
#
# Needs root (or unprivileged user namespaces for mmdebstrap's unshare mode), the Debian packages
# mmdebstrap, umoci and skopeo, git, and a python3 with pip (PYTHON) to build the wheel; network
# access to Debian's packages and PyPI. Takes about 3 to 4 minutes on 2 cores.
#
# Environment:
#   KARTA_IMAGE_NAME  the image's repository (default ghcr.io/karta-dev/karta)
#   KARTA_IMAGE_TAG   its tag (default: the package version of pyproject.toml)
#   KARTA_IMAGE_OUT   the output directory (default dist/image): oci/ (the OCI layout),
#                     karta-<tag>.docker.tar, rootfs.tar (the layer, uncompressed), build-info.txt
#   SOURCE_DATE_EPOCH the time of every file and of the image (default: the commit time of HEAD)
#   PYTHON            the python3 that builds the wheel and runs pip (default python3)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
python=$(command -v "${PYTHON:-python3}") || { echo "build.sh: ${PYTHON:-python3} is not on PATH" >&2; exit 2; }
export PYTHON=$python  # for customize.sh, run by mmdebstrap

die() { echo "build.sh: $*" >&2; exit 2; }
for tool in mmdebstrap umoci skopeo git; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH (Debian: apt-get install mmdebstrap umoci skopeo git)"
done
"$python" -m pip --version >/dev/null 2>&1 || die "$python has no pip (set PYTHON to a python3 with pip)"

# --- what is built ---------------------------------------------------------------------------
# The image's contents and config; the Containerfile repeats each of these (a test compares them).
SUITE=bookworm
PACKAGES=python3,ca-certificates
IMAGE_USER=65532:65532
PASSWD_LINE='nonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin'
GROUP_LINE='nonroot:x:65532:'
ENTRYPOINT=karta-controller
WORKDIR=/home/nonroot
ENVIRONMENT=(
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  LANG=C.UTF-8
  PYTHONDONTWRITEBYTECODE=1
  PYTHONUNBUFFERED=1
)
PORTS=(8080/tcp 8081/tcp 9443/tcp)
SOURCE_URL=https://github.com/karta-dev/karta
LICENSES=Apache-2.0
TITLE=karta
DESCRIPTION='karta-controller and kli: Karta definitions of Kubernetes AI workloads, gang scheduling'

cd "$repo"
version=$("$python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' pyproject.toml)
name=${KARTA_IMAGE_NAME:-ghcr.io/karta-dev/karta}
tag=${KARTA_IMAGE_TAG:-$version}
out=${KARTA_IMAGE_OUT:-$repo/dist/image}
revision=$(git rev-parse HEAD)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "build.sh: warning: uncommitted changes are not in the image (it is built from HEAD $revision)" >&2
fi

start=$(date +%s)
work=$(mktemp -d)
chmod 0755 "$work"  # mmdebstrap's unshare mode reads the hook's files as another user
trap 'rm -rf "$work"' EXIT
echo "build.sh: $name:$tag from $revision, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH ($created)" >&2

# --- karta's wheel, from the committed tree ----------------------------------------------------
mkdir -p "$work/src" "$work/dist"
cp "$here/requirements.txt" "$work/requirements.txt"
git archive --format=tar HEAD | tar -x -C "$work/src"
# the build backend pinned (its version is in the wheel's metadata)
PIP_CONSTRAINT="$here/build-constraints.txt" \
  "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$work/dist" "$work/src" >&2

# --- the root filesystem, as one sorted tar with clamped mtimes ---------------------------------
# merged-usr through usr-is-merged (not usrmerge, which pulls in perl); no documentation, manual
# pages or translations; no device nodes (the runtime makes /dev).
nodoc=()
for dir in doc man info locale lintian; do
  nodoc+=(--dpkgopt="path-exclude=/usr/share/$dir/*")
done
nodoc+=(--dpkgopt='path-include=/usr/share/doc/*/copyright')
mmdebstrap --quiet --variant=essential --include="$PACKAGES" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "${nodoc[@]}" --skip=output/dev \
  --customize-hook="\"$here/customize.sh\" \"\$1\" \"$work\" \"$version\" '$PASSWD_LINE' '$GROUP_LINE' '$WORKDIR'" \
  "$SUITE" "$work/rootfs.tar" >&2

# --- the OCI image: one layer, a fixed config ----------------------------------------------------
rm -rf "$out"
mkdir -p "$out"
oci="$out/oci"
umoci init --layout "$oci"
umoci new --image "$oci:$tag"
umoci raw add-layer --image "$oci:$tag" --history.created="$created" \
  --history.created_by="hack/image/build.sh: mmdebstrap $SUITE ($PACKAGES), karta $version" "$work/rootfs.tar"
config=(--created="$created" --author="$SOURCE_URL" --os=linux --architecture=amd64 --no-history
  --config.user="$IMAGE_USER" --config.entrypoint="$ENTRYPOINT" --config.workingdir="$WORKDIR")
for env in "${ENVIRONMENT[@]}"; do config+=(--config.env="$env"); done
for port in "${PORTS[@]}"; do config+=(--config.exposedports="$port"); done
for label in \
  "org.opencontainers.image.source=$SOURCE_URL" \
  "org.opencontainers.image.version=$version" \
  "org.opencontainers.image.revision=$revision" \
  "org.opencontainers.image.licenses=$LICENSES" \
  "org.opencontainers.image.title=$TITLE" \
  "org.opencontainers.image.description=$DESCRIPTION" \
  "org.opencontainers.image.created=$created"; do
  config+=(--config.label="$label")
done
umoci config --image "$oci:$tag" "${config[@]}"
umoci gc --layout "$oci"
skopeo copy --quiet "oci:$oci:$tag" "docker-archive:$out/karta-$tag.docker.tar:$name:$tag"
mv "$work/rootfs.tar" "$out/rootfs.tar"

# --- what was built ------------------------------------------------------------------------------
"$python" - "$oci" "$out" "$name:$tag" "$(( $(date +%s) - start ))" <<'PY' | tee "$out/build-info.txt"
import hashlib, json, os, sys
oci, out, ref, seconds = sys.argv[1:]
index = json.load(open(f"{oci}/index.json"))
(desc,) = index["manifests"]
blob = lambda d: f"{oci}/blobs/{d['digest'].replace(':', '/')}"
manifest = json.load(open(blob(desc)))
compressed = sum(layer["size"] for layer in manifest["layers"]) + manifest["config"]["size"] + desc["size"]
config = json.load(open(blob(manifest["config"])))
archive = [f for f in os.listdir(out) if f.endswith(".docker.tar")][0]
sha = hashlib.sha256(open(f"{out}/{archive}", "rb").read()).hexdigest()
print(f"image:               {ref}")
print(f"manifest digest:     {desc['digest']}")
print(f"config digest:       {manifest['config']['digest']} (image ID)")
print(f"layer diff_id:       {config['rootfs']['diff_ids'][0]}")
print(f"compressed size:     {compressed} bytes ({compressed / 1e6:.1f} MB, gzip layer + config + manifest)")
print(f"uncompressed size:   {os.path.getsize(f'{out}/rootfs.tar')} bytes ({os.path.getsize(f'{out}/rootfs.tar') / 1e6:.1f} MB, the layer tar)")
print(f"docker-archive:      {out}/{archive} sha256:{sha}")
print(f"build time:          {seconds} s")
PY
