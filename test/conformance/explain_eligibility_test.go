package conformance

import (
	"context"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// TestExplainPreemptionEligibilityMatchesKubebench: on
// testdata/kubebench/preemption-terminating.yaml (kube's
// TestPodEligibleToPreemptOthers as a cluster: nothing is placed or evicted
// there, so each pod's last cycle is against the snapshot as it is), the
// explanation of every pod kube left pending ends with kube's own message,
// word for word: the FitError, then the PostFilter's (`not eligible due to
// a terminating pod on the nominated node.` for a pod nominated where its
// victim still terminates).
func TestExplainPreemptionEligibilityMatchesKubebench(t *testing.T) {
	cl, err := snapshot.LoadPaths([]string{"../../testdata/kubebench/preemption-terminating.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want preemptFile
	readJSONFile(t, "../../testdata/kubebench/preemption-terminating.preempt.json", &want)
	if len(want.Placements)+len(want.Evictions)+len(want.Nominations) != 0 || len(want.Unschedulable) != 3 {
		t.Fatalf("kube's record: %+v; want 3 pods left pending and nothing else", want)
	}
	cfg, reg := defaultEngine(t)
	state, err := explain.NewState(context.Background(), cl, explain.Options{Config: cfg, Registry: reg, Nearest: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range want.Unschedulable {
		t.Run(u.Pod, func(t *testing.T) {
			ns, name := splitPodKey(u.Pod)
			pod, err := explain.FindPod(cl, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := state.Explain(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Preemption == nil {
				t.Fatalf("no preemption outcome; message %q", rep.Message)
			}
			if got := rep.Message + " " + rep.Preemption.Message; got != u.Message {
				t.Errorf("explain:\n got %q\nwant %q (kube-scheduler's)", got, u.Message)
			}
		})
	}
}
