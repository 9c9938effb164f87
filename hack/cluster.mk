# Test control plane targets, included by the top-level Makefile.
#   make e2e-bins      build etcd, kube-apiserver, kube-scheduler v1.37 (cached per version)
#   make cluster-up    start etcd + kube-apiserver in the background; prints export KUBECONFIG=...
#                      (CLUSTER_NODES=20 CLUSTER_SCHEDULER=1 for fake nodes and the real scheduler,
#                      CLUSTER_WORKLOADS=1 for the v1beta1 Workload API and its gates)
#   make cluster-down  stop it and remove its state
#   make bench-live    pods/s of `kubectl sched run` vs kube-scheduler v1.37.2 on the
#                      test cluster (BENCH_LIVE_NODES=1000 BENCH_LIVE_PODS=3000; BENCH_LIVE_QPS=1000/1000
#                      runs that one client setting only, BENCH_LIVE_CPUPROFILE=prefix profiles our runs,
#                      BENCH_LIVE_SCHEDULERS=kubectl-sched,kube-scheduler,bind-only adds the bind-only pace)

.PHONY: e2e-bins cluster-up cluster-down cluster-status bench-live

e2e-bins: ## build the e2e control-plane binaries into the cache (prints the directory)
	@./hack/build-e2e-bins.sh

cluster-up: ## start a local control plane in the background; eval "$$(make -s cluster-up)"
	@./hack/cluster.sh up

cluster-down: ## stop the local control plane and remove its state
	@./hack/cluster.sh down

cluster-status: ## say whether the local control plane runs
	@./hack/cluster.sh status

BENCH_LIVE_NODES ?= 1000
BENCH_LIVE_PODS  ?= 3000
BENCH_LIVE_ROUNDS ?= 3
# One "qps/burst" client setting instead of both 50/100 and 1000/1000 (the
# QPS 50 runs are client-bound and take minutes at 5000 nodes).
BENCH_LIVE_QPS ?=
BENCH_LIVE_CPUPROFILE ?=
# kubectl-sched,kube-scheduler by default; add bind-only for the API server's pace.
BENCH_LIVE_SCHEDULERS ?=

bench-live: e2e-bins ## pods/s of `kubectl sched run` and kube-scheduler v1.37.2, QPS 50/100 and 1000/1000, 1000 nodes, 3000 pods
	@out=$$(mktemp); \
	KUBECTL_SCHED_E2E_BENCH=1 KUBECTL_SCHED_E2E_BENCH_NODES=$(BENCH_LIVE_NODES) KUBECTL_SCHED_E2E_BENCH_PODS=$(BENCH_LIVE_PODS) KUBECTL_SCHED_E2E_BENCH_ROUNDS=$(BENCH_LIVE_ROUNDS) \
		KUBECTL_SCHED_E2E_BENCH_QPS=$(BENCH_LIVE_QPS) KUBECTL_SCHED_E2E_BENCH_CPUPROFILE=$(BENCH_LIVE_CPUPROFILE) \
		KUBECTL_SCHED_E2E_BENCH_SCHEDULERS=$(BENCH_LIVE_SCHEDULERS) \
		$(GO) test -count=1 -timeout 90m -run '^TestRunThroughput$$' -v ./test/e2e/ >$$out 2>&1; rc=$$?; \
	grep -E 'throughput_test.go|^ +(QPS|[0-9]+ nodes|[0-9]+/[0-9]+ |\(bind-only)|^(--- |ok|FAIL|PASS)' $$out; \
	if [ $$rc -ne 0 ]; then tail -50 $$out; fi; rm -f $$out; exit $$rc
