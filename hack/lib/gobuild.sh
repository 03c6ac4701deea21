# Sourced by hack/cluster/build.sh and hack/helm/build.sh: Go commands built once into a cache
# directory, and reused while its build stamp matches.
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
