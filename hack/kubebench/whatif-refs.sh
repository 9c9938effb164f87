#!/usr/bin/env bash
# Records the what-if references: for every line of
# testdata/kubebench/whatif/cases.txt (or only those named as arguments), runs
# hack/kubebench -capacity or -drain on the case's cluster and writes
# testdata/kubebench/whatif/NAME.json. Generated clusters are made with
# hack/gensnap into a temporary directory (they are not stored).
#   hack/kubebench/whatif-refs.sh [NAME ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/testdata/kubebench/whatif
bin=${KUBEBENCH_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-sched/kubebench}
mkdir -p "$(dirname "$bin")"
(cd "$root/hack/kubebench" && GOWORK=off go build -o "$bin" .)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cluster() { # CLUSTER -> path of a snapshot file
  case "$1" in
    gen:*)
      IFS=: read -r _ w a b c <<<"$1"
      local f="$tmp/${1//[:\/]/_}.json"
      if [ ! -f "$f" ]; then
        if [ -n "$b" ]; then
          (cd "$root" && go run ./hack/gensnap -w "$w" -nodes "$a" -init "$b" -pending 0 -seed "$c" -o "$f") >&2
        else
          (cd "$root" && go run ./hack/gensnap -w "$w" -seed "$a" -o "$f") >&2
        fi
      fi
      echo "$f" ;;
    */*) echo "$root/$1" ;;
    *) echo "$dir/$1" ;;
  esac
}

nodes() { # NODES SNAPSHOT -> comma-separated node names (first/step: JSON snapshots)
  case "$1" in
    first:*|step:*)
      python3 -c '
import json, sys
spec, path = sys.argv[1], sys.argv[2]
names = sorted(o["metadata"]["name"] for o in json.load(open(path))["items"] if o["kind"] == "Node")
p = spec.split(":")
sel = names[:int(p[1])] if p[0] == "first" else names[::int(p[1])][:int(p[2])]
print(",".join(sel))' "$1" "$2" ;;
    *) echo "$1" ;;
  esac
}

grep -v '^#' "$dir/cases.txt" | while read -r name mode cl arg opts; do
  [ -n "$name" ] || continue
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  snap=$(cluster "$cl")
  args=(-percentage 100 -out "$dir/$name.json")
  for o in $opts; do
    case "$o" in
      max=*) args+=(-max "${o#max=}") ;;
      add=*) args+=(-node-template "$dir/m6i.yaml" -add-nodes "${o#add=}") ;;
      delete) args+=(-drain-delete) ;;
      force) args+=(-drain-force) ;;
      preempt) args+=(-drain-preemption) ;;
      long|min=*|gang=*) ;;
    esac
  done
  if [ "$mode" = capacity ]; then
    args+=(-capacity "$dir/$arg")
  else
    args+=(-drain "$(nodes "$arg" "$snap")")
  fi
  echo "== $name" >&2
  start=$SECONDS
  "$bin" "${args[@]}" "$snap"
  echo "   $((SECONDS - start)) s" >&2
done
