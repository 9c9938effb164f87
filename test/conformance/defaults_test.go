package conformance

import (
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// defaultEngine is the configuration and registry kube-scheduler's
// reference runs use: the default profile, the in-tree plugins.
func defaultEngine(t *testing.T) (*configv1.KubeSchedulerConfiguration, schedcore.Registry) {
	t.Helper()
	cfg, err := engine.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, reg
}

// preemptionRefs are the recorded runs of hack/kubebench -preemption: the
// snapshot and the file under testdata/kubebench with kube's answers.
var preemptionRefs = []struct{ name, snapshot, want string }{
	{"hand-made basic cases", "../../testdata/kubebench/preemption-basic.json", "preemption-basic.preempt.json"},
	{"a chain of preemptions counting nominated pods", "../../testdata/kubebench/preemption-chain.json", "preemption-chain.preempt.json"},
	{"a seeded random cluster with PDBs and preemptionPolicy Never", "../../testdata/kubebench/preemption-random.json", "preemption-random.preempt.json"},
	{"the shipped example cluster", "../../examples/cluster.yaml", "example-cluster.preempt.json"},
	{"the CLI's small cluster", "../../testdata/clusters/small.yaml", "small.preempt.json"},
	{"preemptors nominated where a victim still terminates", "../../testdata/kubebench/preemption-terminating.yaml", "preemption-terminating.preempt.json"},
}
