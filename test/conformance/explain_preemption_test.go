package conformance

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// TestExplainPreemptionMatchesKubebench checks explain's preemption dry run
// against what the real kube-scheduler did (hack/kubebench -preemption):
// for the first pending pod in queue order, which kube schedules against
// the snapshot as it is, explain's nominated node and victims are the ones
// kube nominated and evicted for it; a first pod kube neither placed nor
// nominated gets no nomination from explain either.
func TestExplainPreemptionMatchesKubebench(t *testing.T) {
	cases := preemptionRefs
	cfg, reg := defaultEngine(t)
	checked := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, err := snapshot.LoadPaths([]string{c.snapshot}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var want preemptFile
			readJSONFile(t, "../../testdata/kubebench/"+c.want, &want)
			first := firstPending(cl)
			if first == "" {
				t.Fatal("no pending pod")
			}
			wantVictims := []string{}
			for _, e := range want.Evictions {
				if e.Preemptor == first {
					wantVictims = append(wantVictims, e.Pod)
				}
			}
			wantNode := ""
			for _, n := range want.Nominations {
				if n.Pod == first && wantNode == "" {
					wantNode = n.Node
				}
			}
			ns, name := splitPodKey(first)
			pod, err := explain.FindPod(cl, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := explain.Run(context.Background(), cl, pod, explain.Options{Config: cfg, Registry: reg, Nearest: -1})
			if err != nil {
				t.Fatal(err)
			}
			if rep.NumFeasible > 0 {
				if wantNode != "" || len(wantVictims) > 0 {
					t.Fatalf("%s fits (on %s), but kube preempted for it on %q: %v", first, rep.Selected, wantNode, wantVictims)
				}
				t.Skipf("%s fits: no preemption to compare", first)
			}
			if rep.Preemption == nil {
				t.Fatalf("%s fits nowhere and explain has no preemption outcome", first)
			}
			got := append([]string{}, rep.Preemption.Victims...)
			sort.Strings(got)
			sort.Strings(wantVictims)
			if rep.Preemption.Node != wantNode {
				t.Errorf("%s: explain would nominate %q, kube nominated %q", first, rep.Preemption.Node, wantNode)
			}
			if d := cmp.Diff(wantVictims, got); d != "" {
				t.Errorf("%s: victims (-kube +explain):\n%s", first, d)
			}
			checked++
		})
	}
	t.Logf("compared the preemption of %d first pods", checked)
}

// firstPending is the first pending pod in queue order, "namespace/name".
func firstPending(cl *snapshot.Cluster) string {
	work := *cl
	pending := engine.FillCache(schedcore.NewCache(schedcore.DefaultFeatures), &work, map[string]*schedruntime.Framework{"default-scheduler": nil})
	if len(pending) == 0 {
		return ""
	}
	return pending[0].Namespace + "/" + pending[0].Name
}
