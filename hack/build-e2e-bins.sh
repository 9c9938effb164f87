#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-scheduler for the end-to-end tests from
# the separate Go module in hack/e2e-bins (so k8s.io/kubernetes never enters the
# main go.mod) into a cache directory keyed by the Kubernetes version, skipping
# what is already built. Prints that directory as the last line on stdout; the
# build's own output goes to stderr.
#
#   KUBECTL_SCHED_E2E_BIN_DIR  where the binaries go
#                              (default ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-sched/e2e/<version>)
#   KUBECTL_SCHED_E2E_REBUILD  set to 1 to rebuild even if the binaries are there
#
# The binaries are rebuilt when the module (go.mod/go.sum) or the build flags
# change: a stamp file next to them records what they were built from.
set -euo pipefail

mod_dir=$(cd "$(dirname "$0")/e2e-bins" && pwd)
k8s_version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 } $1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2 }' "$mod_dir/go.mod" | head -n1)
[ -n "$k8s_version" ] || { echo "build-e2e-bins: no k8s.io/kubernetes version in $mod_dir/go.mod" >&2; exit 1; }
bin_dir=${KUBECTL_SCHED_E2E_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-sched/e2e/$k8s_version}

minor=${k8s_version#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
# binary name -> package
declare -A pkgs=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
)
stamp=$( { cat "$mod_dir/go.mod" "$mod_dir/go.sum"; echo "$ldflags"; go env GOVERSION GOOS GOARCH; } | sha256sum | cut -d' ' -f1)

mkdir -p "$bin_dir"
exec 9>"$bin_dir/.lock"
flock 9 # one build at a time: parallel test packages may all ask

# A stamp that names another module or other flags means stale binaries. No
# stamp at all with the binaries present means someone put them there: use them.
if [ "${KUBECTL_SCHED_E2E_REBUILD:-0}" = 1 ] ||
   { [ -f "$bin_dir/.stamp" ] && [ "$(cat "$bin_dir/.stamp")" != "$stamp" ]; }; then
  rm -f "$bin_dir/.stamp"
  for b in "${!pkgs[@]}"; do rm -f "$bin_dir/$b"; done
fi
missing=()
for b in etcd kube-apiserver kube-scheduler; do
  [ -x "$bin_dir/$b" ] || missing+=("$b")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "build-e2e-bins: building ${missing[*]} ($k8s_version) into $bin_dir" >&2
  tmp=$(mktemp -d "$bin_dir/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  targets=()
  for b in "${missing[@]}"; do targets+=("${pkgs[$b]}"); done
  start=$SECONDS
  # One `go build` for all of them: the packages they share compile once and
  # the links overlap with compiling what is left (each link peaks near 2.5 GB).
  (cd "$mod_dir" && CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=readonly \
    go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp/" "${targets[@]}") >&2
  [ -f "$tmp/server" ] && mv -f "$tmp/server" "$tmp/etcd" # go.etcd.io/etcd/server/v3 builds as "server"
  for b in "${missing[@]}"; do mv -f "$tmp/$b" "$bin_dir/$b"; done
  echo "$stamp" > "$bin_dir/.stamp"
  echo "build-e2e-bins: built ${missing[*]} in $((SECONDS - start))s" >&2
fi
echo "$bin_dir"
