# Sourced by the build.sh of hack/cluster, hack/helm, hack/kubectl, hack/kwok, hack/kuberay and
# hack/training-operator: Go commands built once into a cache directory, and reused while its build
# stamp matches.
#
# go_build_cached LABEL DEST STAMP FORCE LDFLAGS PACKAGE...
#   Builds every PACKAGE (the binary is named after its last path element) into DEST/bin, unless
#   DEST/build.stamp holds STAMP, FORCE is not 1 and every binary is there. One build at a time
#   per DEST (flock: pytest and a shell may both ask). Two compile jobs (GOMAXPROCS, default 2,
#   the machine's core count), nice, -trimpath, no cgo (static binaries, no C toolchain).
#   Progress goes to stderr; DEST/bin is left for the caller to print.
go_build_cached() {
  local label=$1 dest=$2 stamp=$3 force=$4 ldflags=$5
  shift 5
  local bin="$dest/bin" binaries=() package
  for package in "$@"; do binaries+=("${package##*/}"); done

  _go_build_cached_hit() {
    [ "$force" != 1 ] || return 1
    [ "$(cat "$dest/build.stamp" 2>/dev/null)" = "$stamp" ] || return 1
    local b
    for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done
  }
  _go_build_cached_hit && return 0
  mkdir -p "$dest"
  exec 9>"$dest/.lock"
  flock 9
  _go_build_cached_hit && return 0

  local tmp="$dest/bin.tmp.$$" start
  rm -rf "$tmp"
  mkdir -p "$tmp"
  trap "rm -rf '$tmp'" EXIT
  echo "$label: building into $bin (first time: several minutes)" >&2
  start=$(date +%s)
  GOMAXPROCS="${GOMAXPROCS:-2}" CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
    nice -n 10 go build -p "${GOMAXPROCS:-2}" -trimpath -ldflags="$ldflags" -o "$tmp/" "$@" >&2
  rm -rf "$bin"
  mv "$tmp" "$bin"
  trap - EXIT
  printf '%s\n' "$stamp" > "$dest/build.stamp"
  echo "$label: built in $(( $(date +%s) - start ))s" >&2
}

# go_build_pinned_tool NAME MODULE
#   For hack/NAME/build.sh: builds the `tool` packages of hack/NAME/go.mod (an upstream main
#   package built by path at the version go.mod pins for MODULE) into
#   $KARTA_CLUSTER_CACHE/NAME-<version>/bin and prints that directory on stdout. The stamp is the
#   hash of go.mod, go.sum and the Go version; KARTA_<NAME>_FORCE=1 (upper case, - as _) rebuilds.
go_build_pinned_tool() {
  local name=$1 module=$2 dir version force_var
  dir=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
  command -v go >/dev/null || { echo "hack/$name/build.sh: go is not on PATH" >&2; return 2; }
  version=$(sed -nE "s#^[[:space:]]*(require[[:space:]]+)?${module//./\\.}[[:space:]]+(v[^[:space:]]+).*#\\2#p" \
    "$dir/go.mod" | head -n1)
  [ -n "$version" ] || { echo "hack/$name/build.sh: cannot read the $module version from go.mod" >&2; return 2; }
  local dest="${KARTA_CLUSTER_CACHE:-$HOME/.cache/karta-cluster}/$name-$version" stamp packages
  stamp=$( { cat "$dir/go.mod" "$dir/go.sum"; (cd "$dir" && go env GOVERSION GOOS GOARCH); } | sha256sum | cut -d' ' -f1)
  mapfile -t packages < <(sed -nE 's#^tool[[:space:]]+([^[:space:]]+)$#\1#p' "$dir/go.mod")
  [ "${#packages[@]}" -gt 0 ] || { echo "hack/$name/build.sh: go.mod names no tool package" >&2; return 2; }
  force_var="KARTA_$(printf '%s' "$name" | tr 'a-z-' 'A-Z_')_FORCE"
  (cd "$dir" && go_build_cached "hack/$name/build.sh: $module $version" "$dest" "$stamp" \
    "${!force_var:-0}" "-s -w" "${packages[@]}")
  echo "$dest/bin"
}
