# Test control plane targets, included by the top-level Makefile.
#   make e2e-bins      build etcd, kube-apiserver, kube-scheduler v1.37 (cached per version)
#   make cluster-up    start etcd + kube-apiserver in the background; prints export KUBECONFIG=...
#                      (CLUSTER_NODES=20 CLUSTER_SCHEDULER=1 for fake nodes and the real scheduler)
#   make cluster-down  stop it and remove its state

.PHONY: e2e-bins cluster-up cluster-down cluster-status

e2e-bins: ## build the e2e control-plane binaries into the cache (prints the directory)
	@./hack/build-e2e-bins.sh

cluster-up: ## start a local control plane in the background; eval "$$(make -s cluster-up)"
	@./hack/cluster.sh up

cluster-down: ## stop the local control plane and remove its state
	@./hack/cluster.sh down

cluster-status: ## say whether the local control plane runs
	@./hack/cluster.sh status
