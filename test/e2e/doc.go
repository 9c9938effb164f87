// Package e2e holds the end-to-end tests: they run against a real etcd and
// kube-apiserver v1.37 started by test/e2e/cluster (one per package, in
// TestMain), with fake nodes and, where a test compares against it, the real
// kube-scheduler. The first run builds the binaries (several minutes); set
// KUBECTL_SCHED_E2E=0 to skip these tests.
package e2e
