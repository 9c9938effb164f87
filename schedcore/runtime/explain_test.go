package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// slotKey keys slotState in the CycleState.
const slotKey schedcore.StateKey = "PreFilterSlots"

// slotState is what Slots' PreFilter computes: the slots the pod needs.
type slotState struct{ want int }

func (s *slotState) Clone() schedcore.StateData { return s }

// slots is a filter (and scorer) with an explainer: a node has as many free slots as
// its "slots" label says; the pod needs as many as its own label says,
// read once in PreFilter. A second plugin, veto, rejects nodes labelled
// veto without explaining itself.
type slots struct{}

func (slots) Name() string                            { return "Slots" }
func (slots) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (slots) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}
func (p slots) Score(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	return int64(p.free(ni)), nil
}
func (slots) PreFilter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	n, _ := strconv.Atoi(pod.Labels["slots"])
	state.Write(slotKey, &slotState{want: n})
	return nil, nil
}
func (slots) free(ni *schedcore.NodeInfo) int {
	n, _ := strconv.Atoi(ni.Node().Labels["slots"])
	return n
}
func (p slots) Filter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*slotState](state, slotKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if p.free(ni) < s.want {
		return schedcore.NewStatus(schedcore.Unschedulable, "not enough slots")
	}
	return nil
}
func (p slots) ExplainFilter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, err := schedcore.ReadAs[*slotState](state, slotKey)
	if err != nil {
		return nil
	}
	missing := s.want - p.free(ni)
	return schedcore.NewFilterExplanation(schedcore.ShortfallOf(int64(missing), int64(s.want)), fmt.Sprintf("needs %d slots more", missing))
}

type veto struct{}

func (veto) Name() string { return "Veto" }
func (veto) Filter(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	if ni.Node().Labels["veto"] != "" {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "vetoed")
	}
	return nil
}

var (
	_ schedcore.FilterExplainer = slots{}
	_ schedcore.PreFilterPlugin = slots{}
	_ schedcore.ScorePlugin     = slots{}
	_ schedcore.FilterPlugin    = veto{}
)

// TestExplainRunsEveryNodeAndTheExplainers checks that Explain filters
// every node whatever the profile's percentageOfNodesToScore, leaves the
// framework as it was (several explanations may run at once: the race
// detector watches), and attaches to each rejection the explanation the
// plugin computes from the cycle state its Filter read.
func TestExplainRunsEveryNodeAndTheExplainers(t *testing.T) {
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"Veto": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return veto{}, nil }},
	}
	name, pct := v1.DefaultSchedulerName, int32(5)
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, PercentageOfNodesToScore: &pct, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}, {Name: "Veto"}}},
	}}
	var nodes []*v1.Node
	for i := 0; i < 300; i++ {
		n := schedtest.MakeNode(fmt.Sprintf("n%03d", i)).Label("slots", strconv.Itoa(i%4))
		if i%10 == 0 {
			n.Label("veto", "yes")
		}
		nodes = append(nodes, n.Obj())
	}
	snap := schedcore.NewSnapshot(nil, nodes)
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 4), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := schedtest.MakePod("p").Label("slots", "3").Obj()

	var wg sync.WaitGroup
	exs := make([]*schedruntime.Explanation, 4)
	for i := range exs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			exs[i] = schedruntime.Explain(context.Background(), fw, snap, pod, nil)
		}()
	}
	wg.Wait()
	if got := fw.PercentageOfNodesToScore(); got == nil || *got != pct {
		t.Errorf("the profile's percentageOfNodesToScore changed to %v", got)
	}
	for _, ex := range exs {
		feasible := 0
		for _, ne := range ex.Nodes {
			if ne.Feasible {
				feasible++
			}
		}
		// Nodes with 3 slots and no veto: i%4 == 3 and i%10 != 0.
		if feasible != 75 {
			t.Fatalf("%d feasible nodes, want every one of the 75", feasible)
		}
	}
	type verdict struct {
		Plugin string
		Gaps   []string
		Short  float64
	}
	got := map[string][]verdict{}
	for _, ne := range exs[0].Nodes {
		if ne.Name != "n000" && ne.Name != "n001" && ne.Name != "n002" {
			continue
		}
		for _, f := range ne.Failures {
			v := verdict{Plugin: f.Plugin}
			if f.Explanation != nil {
				v.Short = f.Explanation.Shortfall
				for _, g := range f.Explanation.Gaps {
					v.Gaps = append(v.Gaps, g.Text)
				}
			}
			got[ne.Name] = append(got[ne.Name], v)
		}
	}
	want := map[string][]verdict{
		"n000": {{Plugin: "Slots", Gaps: []string{"needs 3 slots more"}, Short: 1}, {Plugin: "Veto"}},
		"n001": {{Plugin: "Slots", Gaps: []string{"needs 2 slots more"}, Short: 2.0 / 3}},
		"n002": {{Plugin: "Slots", Gaps: []string{"needs 1 slots more"}, Short: 1.0 / 3}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
}

func TestShortfallOf(t *testing.T) {
	tests := []struct {
		name            string
		missing, wanted int64
		want            float64
	}{
		{"a quarter missing", 1, 4, 0.25},
		{"all of it missing", 4, 4, 1},
		{"more missing than wanted is 1", 5, 4, 1},
		{"nothing wanted is 1", 1, 0, 1},
		{"nothing missing is 0", 0, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schedcore.ShortfallOf(tt.missing, tt.wanted); got != tt.want {
				t.Errorf("ShortfallOf(%d, %d) = %v, want %v", tt.missing, tt.wanted, got, tt.want)
			}
		})
	}
}

func TestRejectedForGroup(t *testing.T) {
	fitError := func(pre string, absent *schedcore.Status, nodes map[string]*schedcore.Status) *schedcore.Status {
		n2s := schedcore.NewNodeToStatus()
		if absent != nil {
			n2s.SetAbsentNodesStatus(absent)
		}
		for k, v := range nodes {
			n2s.Set(k, v)
		}
		fe := &schedcore.FitError{Pod: schedtest.MakePod("p").Obj(), NumAllNodes: 3, Diagnosis: schedcore.Diagnosis{NodeToStatus: n2s, PreFilterMsg: pre}}
		return schedcore.NewStatus(schedcore.Unschedulable).WithError(fe)
	}
	group := func() *schedcore.Status {
		return schedcore.NewStatus(schedcore.Unschedulable, "group backs off").ForGroup()
	}
	own := func() *schedcore.Status { return schedcore.NewStatus(schedcore.Unschedulable, "Insufficient cpu") }
	tests := []struct {
		name string
		st   *schedcore.Status
		want bool
	}{
		{"a success is not", nil, false},
		{"a status of the pod's own is not", own(), false},
		{"a status marked for the group is", group(), true},
		{"a FitError with a node rejected for the group is", fitError("", nil, map[string]*schedcore.Status{"a": own(), "b": group()}), true},
		{"a FitError of the pod's own is not", fitError("", nil, map[string]*schedcore.Status{"a": own()}), false},
		{"a PreFilter rejection for the group is", fitError("group backs off", group(), nil), true},
		{"the absent status counts only when PreFilter rejected", fitError("", group(), map[string]*schedcore.Status{"a": own()}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schedcore.RejectedForGroup(tt.st); got != tt.want {
				t.Errorf("RejectedForGroup = %v, want %v", got, tt.want)
			}
		})
	}
}

// closest scores the nodes whose free slots are closest to what the pod
// needs highest: the ranking depends on the pod.
type closest struct{ slots }

func (closest) Name() string { return "Closest" }
func (p closest) Score(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	want, _ := strconv.Atoi(pod.Labels["slots"])
	return int64(10 - max(p.free(ni)-want, want-p.free(ni))), nil
}

// An explanation's scores are its own: explaining another pod (other
// feasible nodes, scored into reused columns) leaves them as they were.
func TestExplanationsKeepTheirScores(t *testing.T) {
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"Closest": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return closest{}, nil
		}},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}}},
		Score:      configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Closest"}}},
	}}
	var nodes []*v1.Node
	for i := 0; i < 200; i++ {
		nodes = append(nodes, schedtest.MakeNode(fmt.Sprintf("n%03d", i)).Label("slots", strconv.Itoa(i%5)).Obj())
	}
	snap := schedcore.NewSnapshot(nil, nodes)
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 4), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	copyScores := func(ex *schedruntime.Explanation) []schedcore.NodePluginScores {
		out := make([]schedcore.NodePluginScores, len(ex.Scores))
		for i, s := range ex.Scores {
			out[i] = schedcore.NodePluginScores{Name: s.Name, TotalScore: s.TotalScore,
				RawScores: append([]schedcore.PluginScore(nil), s.RawScores...), Scores: append([]schedcore.PluginScore(nil), s.Scores...)}
		}
		return out
	}
	var exs []*schedruntime.Explanation
	var want [][]schedcore.NodePluginScores
	for _, need := range []string{"0", "3", "1", "4", "0", "2", "3"} {
		ex := schedruntime.Explain(context.Background(), fw, snap, schedtest.MakePod("p"+need).Label("slots", need).Obj(), nil)
		if len(ex.Scores) < 2 {
			t.Fatalf("pod needing %s slots: %d scored nodes", need, len(ex.Scores))
		}
		exs, want = append(exs, ex), append(want, copyScores(ex))
	}
	for k, ex := range exs {
		if d := cmp.Diff(want[k], copyScores(ex)); d != "" {
			t.Errorf("explanation %d's scores changed (-then +now):\n%s", k, d)
		}
	}
}

// TestReleasedNodesStartClean: an explanation's node entries and scores,
// once released, serve the next explanation; that one must be what it
// would be on fresh entries (nothing of the released verdicts or scores
// left on its nodes), also when it has more feasible nodes to score than
// the released one had.
func TestReleasedNodesStartClean(t *testing.T) {
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"Veto": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return veto{}, nil }},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}, {Name: "Veto"}}},
	}}
	var nodes []*v1.Node
	for i := 0; i < 40; i++ {
		n := schedtest.MakeNode(fmt.Sprintf("n%03d", i)).Label("slots", strconv.Itoa(i%4))
		if i%10 == 0 {
			n.Label("veto", "yes")
		}
		nodes = append(nodes, n.Obj())
	}
	snap := schedcore.NewSnapshot(nil, nodes)
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 1), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// summary is what an explanation says of each node.
	summary := func(ex *schedruntime.Explanation) []string {
		var out []string
		for _, ne := range ex.Nodes {
			s := fmt.Sprint(ne.Name, " feasible ", ne.Feasible, " rank ", ne.Rank, " status ", ne.Status.Message())
			for _, f := range ne.Failures {
				s += fmt.Sprint(" ", f.Plugin, " ", f.Shortfall)
			}
			out = append(out, s)
		}
		for _, sc := range ex.Scores {
			out = append(out, fmt.Sprint(sc.Name, " total ", sc.TotalScore, " raw ", sc.RawScores, " weighted ", sc.Scores))
		}
		return out
	}
	ctx := context.Background()
	hard := schedtest.MakePod("hard").Label("slots", "3").Obj()
	easy := schedtest.MakePod("easy").Label("slots", "0").Obj()
	want := summary(schedruntime.Explain(ctx, fw, snap, easy, nil))
	for round := 0; round < 3; round++ {
		schedruntime.Explain(ctx, fw, snap, hard, nil).Release()
		ex := schedruntime.Explain(ctx, fw, snap, easy, nil)
		if d := cmp.Diff(want, summary(ex)); d != "" {
			t.Fatalf("round %d: after a released explanation (-fresh +reused):\n%s", round, d)
		}
		ex.Release()
	}
}
