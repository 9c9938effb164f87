#!/usr/bin/env bash
# Starts or stops a local test control plane (etcd + kube-apiserver v1.37,
# optionally kube-scheduler and fake nodes) in the background.
#
#   hack/cluster.sh up      build what is missing, start, print `export KUBECONFIG=...`
#   hack/cluster.sh down    stop it and remove its state
#   hack/cluster.sh status  say whether it runs
#
#   eval "$(hack/cluster.sh up)"; kubectl get --raw /readyz
#
# Environment:
#   KUBECTL_SCHED_CLUSTER_DIR  state directory (default ${TMPDIR:-/tmp}/kubectl-sched-cluster-$UID)
#   CLUSTER_NODES              fake nodes to create (default 0)
#   CLUSTER_SCHEDULER          1 to also run the real kube-scheduler (default 0)
#   CLUSTER_SCHEDULER_CONFIG   KubeSchedulerConfiguration for it
#   CLUSTER_WORKLOADS          1 to serve kube's Workload API (scheduling.k8s.io/v1beta1
#                              Workloads and PodGroups) with GenericWorkload and
#                              TopologyAwareWorkloadScheduling on (kube-scheduler's too)
# Only the export line goes to stdout; progress goes to stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${KUBECTL_SCHED_CLUSTER_DIR:-${TMPDIR:-/tmp}/kubectl-sched-cluster-$(id -u)}
pidfile=$dir/cluster-up.pid

# running prints the pid of this directory's cluster-up if it is alive; the
# command line is checked too, since pids get reused.
running() {
  [ -f "$pidfile" ] || return 1
  local pid; pid=$(cat "$pidfile")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "cluster-up -dir $dir " || return 1
  echo "$pid"
}

up() {
  if pid=$(running); then
    echo "cluster: already running (pid $pid, $dir)" >&2
    cat "$dir/env"; return
  fi
  rm -rf "$dir"; mkdir -p "$dir"
  "$root/hack/build-e2e-bins.sh" >/dev/null
  (cd "$root" && go build -trimpath -o "$dir/cluster-up" ./test/e2e/cluster/cmd/cluster-up)
  args=(-dir "$dir" -nodes "${CLUSTER_NODES:-0}")
  [ "${CLUSTER_SCHEDULER:-0}" = 1 ] && args+=(-scheduler -scheduler-config "${CLUSTER_SCHEDULER_CONFIG:-}")
  [ "${CLUSTER_WORKLOADS:-0}" = 1 ] && args+=(-workloads)
  setsid "$dir/cluster-up" "${args[@]}" > "$dir/cluster-up.log" 2>&1 < /dev/null &
  local pid=$!
  for _ in $(seq 1 1200); do # 120 s
    if [ -f "$dir/env" ]; then
      echo "cluster: up (pid $pid); logs in $dir/cluster/*.log; stop with hack/cluster.sh down" >&2
      cat "$dir/env"; return
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "cluster: cluster-up exited:" >&2; tail -n 40 "$dir/cluster-up.log" >&2; exit 1
    fi
    sleep 0.1
  done
  echo "cluster: not ready after 120 s:" >&2; tail -n 40 "$dir/cluster-up.log" >&2
  kill "$pid" 2>/dev/null || true
  exit 1
}

down() {
  if pid=$(running); then
    kill -TERM "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      # Its children die with it (they get SIGKILL when their parent dies).
      kill -KILL "$pid" 2>/dev/null || true
    fi
    echo "cluster: stopped (pid $pid)" >&2
  else
    echo "cluster: not running" >&2
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) if pid=$(running); then echo "cluster: running (pid $pid); $(cat "$dir/env" 2>/dev/null)"; else echo "cluster: not running"; exit 1; fi ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
