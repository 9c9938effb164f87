#!/usr/bin/env bash
# Records the workload-aware scheduling references: kube-scheduler
# v1.37.2's own loop (kubebench -gang) on generated GPU clusters
# (hack/gensnap -gang, internal/gen/gang) and on scenarios transcribed
# from kube's integration tests, into testdata/kubebench/gang-*.yaml
# (snapshot) and gang-*.json (reference). Run from the repository root:
#   hack/kubebench/gang-refs.sh
# Each case runs RUNS times (default 3; kubebench -gang-runs): the
# decisions must agree, and a message kube words differently from run to
# run (a random order inside kube) is recorded with its other wordings.
set -euo pipefail
out=testdata/kubebench
bin=${KUBEBENCH_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-sched/kubebench}
mkdir -p "$(dirname "$bin")"
(cd hack/kubebench && go build -o "$bin" .)
gw=GenericWorkload=true
tas=GenericWorkload=true,TopologyAwareWorkloadScheduling=true
# name shape nodes seed gates
generated=(
  "gang-mixed-48n-seed1 mixed 48 1 $gw"
  "gang-mixed-64n-seed2 mixed 64 2 $gw"
  "gang-mixed-96n-seed3 mixed 96 3 $gw"
  "gang-mixed-500n-seed4 mixed 500 4 $gw"
  "gang-topology-24n-seed1 topology 24 1 $tas"
  "gang-topology-64n-seed2 topology 64 2 $tas"
  "gang-topology-200n-seed3 topology 200 3 $tas"
)
for g in "${generated[@]}"; do
  read -r name shape nodes seed gates <<<"$g"
  go run ./hack/gensnap -gang "$shape" -nodes "$nodes" -seed "$seed" -output-file "$out/$name.yaml"
done
# Transcribed from kube's test/integration/scheduler/podgroup (hand-written).
cases=()
for g in "${generated[@]}"; do cases+=("$g"); done
for f in "$out"/gang-kube-*.yaml; do
  name=$(basename "$f" .yaml)
  gates=$gw
  case $name in *topology*) gates=$tas ;; esac
  cases+=("$name - - - $gates")
done
for c in "${cases[@]}"; do
  read -r name _ _ _ gates <<<"$c"
  echo "$name ($gates)"
  "$bin" -feature-gates "$gates" -gang-runs "${RUNS:-3}" -gang "$out/$name.json" "$out/$name.yaml" 2>/dev/null
done
