// Package cluster runs a real Kubernetes control plane for the end-to-end
// tests: etcd, kube-apiserver and, on request, kube-scheduler v1.37, as child
// processes on free 127.0.0.1 ports, with no kubelet, controller-manager or
// container runtime.
//
// The binaries come from the separate module in hack/e2e-bins (this module
// never imports k8s.io/kubernetes); EnsureBinaries runs
// hack/build-e2e-bins.sh, which builds them once into
// ~/.cache/kubectl-sched/e2e/<version>/ (or $KUBECTL_SCHED_E2E_BIN_DIR).
//
// Start makes a state directory with a fresh CA, a serving certificate for
// 127.0.0.1/localhost, an admin client certificate (system:masters) and a
// service-account key pair, starts etcd and kube-apiserver, writes an admin
// kubeconfig and waits for /readyz (a few seconds). Each program logs to a
// file there; DumpLogs prints their tails when a test fails. Stop kills the
// process groups and removes the directory.
//
// Nodes are plain API objects: CreateNodes creates them and sets capacity,
// allocatable and a Ready condition through the status subresource, and
// GenerateNodes makes realistic fleets (zones, instance types). Pods bound to
// them stay Pending, which is all a scheduler test needs.
//
//	func TestMain(m *testing.M) {
//		os.Exit(cluster.RunMain(m, cluster.Options{}, func(c *cluster.Cluster) { testCluster = c }))
//	}
package cluster
