#!/usr/bin/env bash
# Reference benchmark: the real kube-scheduler v1.37.2 framework on a snapshot.
#   hack/kubebench/run.sh SNAPSHOT [CONFIG]
# Environment: PERCENTAGE (percentageOfNodesToScore, default 100; 0 = kube's
# adaptive default), PLACEMENTS (write placements JSON there), KUBEBENCH_FLAGS
# (more flags, e.g. -cpuprofile /tmp/cpu.out).
# The binary is built once (k8s.io/kubernetes takes minutes to compile) into
# ${KUBEBENCH_BIN:-$XDG_CACHE_HOME/kubectl-sched/kubebench}.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 SNAPSHOT [CONFIG]" >&2
  exit 2
fi
abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
snapshot=$(abs "$1")
args=(-percentage "${PERCENTAGE:-100}")
if [ $# -eq 2 ]; then args+=(-config "$(abs "$2")"); fi
if [ -n "${PLACEMENTS:-}" ]; then args+=(-placements "$(abs "$PLACEMENTS")"); fi
# shellcheck disable=SC2206
args+=(${KUBEBENCH_FLAGS:-})
cd "$(dirname "$0")"
bin=${KUBEBENCH_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-sched/kubebench}
mkdir -p "$(dirname "$bin")"
go build -o "$bin" .
exec "$bin" "${args[@]}" "$snapshot"
