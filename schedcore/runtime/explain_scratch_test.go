package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// gate rejects at PreFilter the pods labelled gate: every node then has
// the absent nodes' status and none an explicit one.
type gate struct{}

func (gate) Name() string { return "Gate" }
func (gate) PreFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	if pod.Labels["gate"] != "" {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "gated")
	}
	return nil, nil
}
func (gate) PreFilterExtensions() schedcore.PreFilterExtensions { return nil }
func (gate) Filter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}

// TestExplainScratchStartsClean: an explanation's working memory (which
// nodes are feasible, the statuses by position, the ranking's keys) serves
// the next explanation once it is built or released; each explanation must
// be what it is on fresh memory, whichever pods came before (more or fewer
// feasible nodes, explicit statuses or none), with and without gaps.
func TestExplainScratchStartsClean(t *testing.T) {
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"Veto": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return veto{}, nil }},
		"Gate": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return gate{}, nil }},
		"Closest": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return closest{}, nil
		}},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}, {Name: "Veto"}, {Name: "Gate"}}},
		Score:      configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Closest"}}},
	}}
	var nodes []*v1.Node
	for i := 0; i < 60; i++ {
		n := schedtest.MakeNode(fmt.Sprintf("n%03d", i)).Label("slots", strconv.Itoa(i%4))
		if i%10 == 0 {
			n.Label("veto", "yes")
		}
		nodes = append(nodes, n.Obj())
	}
	snap := schedcore.NewSnapshot(nil, nodes)
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	summary := func(ex *schedruntime.Explanation) []string {
		out := []string{fmt.Sprint("selected ", ex.Selected, " tied ", ex.Tied)}
		for _, ne := range ex.Nodes {
			s := fmt.Sprint(ne.Name, " feasible ", ne.Feasible, " rank ", ne.Rank, " status ", ne.Status.Plugin(), " ", ne.Status.Message())
			for _, f := range ne.Failures {
				s += fmt.Sprint(" ", f.Plugin, " ", f.Shortfall)
			}
			out = append(out, s)
		}
		for _, sc := range ex.Scores {
			out = append(out, fmt.Sprint(sc.Name, " total ", sc.TotalScore))
		}
		return out
	}
	ctx := context.Background()
	pods := map[string]*v1.Pod{
		"easy":  schedtest.MakePod("easy").Label("slots", "0").Obj(),
		"hard":  schedtest.MakePod("hard").Label("slots", "3").Obj(),
		"gated": schedtest.MakePod("gated").Label("gate", "yes").Obj(),
	}
	want := map[string][]string{}
	for name, pod := range pods {
		schedruntime.DropSpareExplainScratch()
		want[name] = summary(schedruntime.Explain(ctx, fw, snap, pod, nil))
	}
	order := []string{"easy", "hard", "gated", "easy", "gated", "hard", "easy"}
	for round := 0; round < 4; round++ {
		for _, name := range order {
			var ex *schedruntime.Explanation
			if round%2 == 0 {
				ex = schedruntime.Explain(ctx, fw, snap, pods[name], nil)
			} else {
				ex = schedruntime.ExplainShortfalls(ctx, fw, snap, pods[name], nil, nil)
			}
			if d := cmp.Diff(want[name], summary(ex)); d != "" {
				t.Fatalf("round %d, %s after other explanations (-fresh +reused):\n%s", round, name, d)
			}
			ex.Release()
		}
	}
	// Explanations not released yet keep their memory (the verdicts of
	// ExplainShortfalls are in its scratch until Release) while others
	// are made.
	for _, shortfalls := range []bool{false, true} {
		var live []*schedruntime.Explanation
		for _, name := range order {
			if shortfalls {
				live = append(live, schedruntime.ExplainShortfalls(ctx, fw, snap, pods[name], nil, nil))
			} else {
				live = append(live, schedruntime.Explain(ctx, fw, snap, pods[name], nil))
			}
		}
		for k, ex := range live {
			if d := cmp.Diff(want[order[k]], summary(ex)); d != "" {
				t.Errorf("shortfalls %v: %s changed while others were explained (-fresh +now):\n%s", shortfalls, order[k], d)
			}
		}
		for _, ex := range live {
			ex.Release()
		}
	}
}
