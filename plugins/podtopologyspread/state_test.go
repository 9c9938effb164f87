package podtopologyspread

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

var badSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: "Bogus"}}}

func TestInvalidSelectorIsAnError(t *testing.T) {
	nodes := []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj()}
	t.Run("a hard constraint's selector that does not parse fails PreFilter", func(t *testing.T) {
		p, snap := newPlugin(t, listArgs(), nil, nodes, nil)
		_, s := p.PreFilter(context.Background(), schedcore.NewCycleState(), mkPod("p").spread(1, "zone", dns, badSelector).obj(), snap.List())
		want := `get constraints from pod: obtaining pod's hard topology spread constraints: "Bogus" is not a valid label selector operator`
		if s.Code() != schedcore.Error || s.Message() != want {
			t.Errorf("PreFilter = %v, want Error %q", s, want)
		}
	})
	t.Run("a soft constraint's selector that does not parse fails PreScore", func(t *testing.T) {
		p, snap := newPlugin(t, listArgs(), nil, nodes, nil)
		s := p.PreScore(context.Background(), schedcore.NewCycleState(), mkPod("p").spread(1, "zone", sa, badSelector).obj(), snap.List())
		want := `calculating preScoreState: obtaining pod's soft topology spread constraints: "Bogus" is not a valid label selector operator`
		if s.Code() != schedcore.Error || s.Message() != want {
			t.Errorf("PreScore = %v, want Error %q", s, want)
		}
	})
	t.Run("a soft constraint's bad selector does not matter to PreFilter", func(t *testing.T) {
		p, snap := newPlugin(t, listArgs(), nil, nodes, nil)
		_, s := p.PreFilter(context.Background(), schedcore.NewCycleState(), mkPod("p").spread(1, "zone", sa, badSelector).obj(), snap.List())
		if !s.IsSkip() {
			t.Errorf("PreFilter = %v, want Skip", s)
		}
	})
	t.Run("hints with a bad selector queue with an error", func(t *testing.T) {
		p, _ := newPlugin(t, listArgs(), nil, nil, nil)
		h, err := p.isSchedulableAfterNodeChange(p.handle.Logger(), mkPod("p").spread(1, "zone", dns, badSelector).obj(), nil, schedtest.ZoneNode("n", "z").Obj())
		if err == nil || h != schedcore.Queue {
			t.Errorf("hint = %v, %v; want Queue with an error", h, err)
		}
	})
}

func TestPreFilterStateClone(t *testing.T) {
	snap := schedcore.NewSnapshot(nil, []*v1.Node{schedtest.ZoneNode("n1", "zone1").Obj(), schedtest.ZoneNode("n2", "zone2").Obj()})
	s := &preFilterState{
		Constraints:   []topologySpreadConstraint{want(1, "zone", mustSel(t, fooSelector))},
		CriticalPaths: []criticalPaths{newCriticalPaths()},
		counts:        schedcore.NewDomainCounts(snap, "zone"),
		selfMatchNum:  []int{1},
	}
	for _, ni := range snap.List() {
		dom, _ := s.counts.AddNode(0, ni, int64(len(ni.Name())-1))
		s.CriticalPaths[0].update(dom, int(s.counts.At(0, dom)))
	}
	c := s.Clone().(*preFilterState)
	dom, _ := c.counts.AddNode(0, snap.List()[0], 4)
	c.CriticalPaths[0].update(dom, 5)
	if diff := cmp.Diff(&filterView{
		Constraints:       s.Constraints,
		CriticalPaths:     []*pathsView{paths("zone1", 1, "zone2", 1)},
		TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
	}, filterViewOf(s), stateCmpOpts...); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	if got := filterViewOf(c).TpValueToMatchNum[0]["zone1"]; got != 5 {
		t.Errorf("the clone counts %d in zone1, want 5", got)
	}
	if c.selfMatchNum[0] != 1 {
		t.Errorf("clone lost selfMatchNum")
	}
	var nilState *preFilterState
	if nilState.Clone() != nil {
		t.Error("nil state cloned into non-nil")
	}
}

func TestCriticalPathsUpdate(t *testing.T) {
	tests := []struct {
		name    string
		updates []struct {
			v string
			n int
		}
		want *pathsView
	}{
		{name: "a new smallest value takes the first path", updates: []struct {
			v string
			n int
		}{{"a", 3}, {"b", 1}}, want: paths("b", 1, "a", 3)},
		{name: "a value between the two takes the second path", updates: []struct {
			v string
			n int
		}{{"a", 1}, {"b", 5}, {"c", 3}}, want: paths("a", 1, "c", 3)},
		{name: "a larger value is not kept", updates: []struct {
			v string
			n int
		}{{"a", 1}, {"b", 2}, {"c", 3}}, want: paths("a", 1, "b", 2)},
		{name: "an existing first path growing past the second swaps them", updates: []struct {
			v string
			n int
		}{{"a", 1}, {"b", 2}, {"a", 3}}, want: paths("b", 2, "a", 3)},
		{name: "an existing second path shrinking below the first swaps them", updates: []struct {
			v string
			n int
		}{{"a", 1}, {"b", 2}, {"b", 0}}, want: paths("b", 0, "a", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := schedcore.NewSnapshot(nil, []*v1.Node{schedtest.ZoneNode("a", "a").Obj(), schedtest.ZoneNode("b", "b").Obj(), schedtest.ZoneNode("c", "c").Obj()})
			d := schedcore.NewDomainCounts(snap, "zone")
			p := newCriticalPaths()
			for _, u := range tt.updates {
				p.update(d.ValueDomain(0, u.v), u.n)
			}
			got := pathsView{}
			for j := range p {
				got[j].TopologyValue, got[j].MatchNum = d.Value(0, p[j].Domain), p[j].MatchNum
			}
			if got != *tt.want {
				t.Errorf("paths = %v, want %v", got, *tt.want)
			}
		})
	}
}

// TestParallelCountsMatchSerial checks that the counts do not depend on
// the parallelism (and, under -race, that the parallel loops do not race).
func TestParallelCountsMatchSerial(t *testing.T) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := 0; i < 300; i++ {
		name := fmt.Sprintf("node-%03d", i)
		n := schedtest.MakeNode(name).OnlyLabels("zone", fmt.Sprintf("zone%d", i%7), v1.LabelHostname, name).Obj()
		if i%11 == 0 {
			n = tainted(n, unschedulableTaint)
		}
		nodes = append(nodes, n)
		for j := 0; j < i%5; j++ {
			pods = append(pods, schedtest.MakePod(fmt.Sprintf("p-%d-%d", i, j)).Node(name).Label("foo", "").Obj())
		}
	}
	pod := mkPod("p", "foo", "").spread(2, "zone", dns, fooSelector, taintsPolicy(honor)).
		spread(1, v1.LabelHostname, dns, fooSelector).spread(1, "zone", sa, fooSelector).spread(3, v1.LabelHostname, sa, fooSelector).obj()
	run := func(parallelism int) (*filterView, schedcore.NodeScoreList) {
		snap := schedcore.NewSnapshot(pods, nodes)
		pl, err := New(context.Background(), listArgs(), schedcore.NewHandle(snap, parallelism))
		if err != nil {
			t.Fatal(err)
		}
		p := pl.(*PodTopologySpread)
		state := schedcore.NewCycleState()
		if _, s := p.PreFilter(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
			t.Fatal(s)
		}
		if s := p.PreScore(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
			t.Fatal(s)
		}
		var scores schedcore.NodeScoreList
		for _, ni := range snap.List() {
			sc, _ := p.Score(context.Background(), state, pod, ni)
			scores = append(scores, schedcore.NodeScore{Name: ni.Name(), Score: sc})
		}
		_ = plugintest.Normalize(context.Background(), p, state, pod, scores)
		return filterViewOf(mustState(t, state)), scores
	}
	s1, sc1 := run(1)
	s16, sc16 := run(16)
	// Which of several equally small domains the critical paths name depends
	// on map order, as in kube; only the counts and the minimum matter.
	if diff := cmp.Diff(s1.TpValueToMatchNum, s16.TpValueToMatchNum); diff != "" {
		t.Errorf("PreFilter counts differ with parallelism (-1 +16):\n%s", diff)
	}
	for i := range s1.CriticalPaths {
		if a, b := s1.CriticalPaths[i][0].MatchNum, s16.CriticalPaths[i][0].MatchNum; a != b {
			t.Errorf("constraint %d: minimum %d with parallelism 1, %d with 16", i, a, b)
		}
	}
	if diff := cmp.Diff(sc1, sc16); diff != "" {
		t.Errorf("scores differ with parallelism (-1 +16):\n%s", diff)
	}
}

// TestDeferredResizeSkip: a pod whose resize is Deferred is not skipped
// (InPlacePodVerticalScalingSchedulerPreemption, alpha and off, is not
// ported).
func TestDeferredResizeSkip(t *testing.T) {
	pod := mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj()
	pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Reason: v1.PodReasonDeferred}}
	nodes := []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.MakeNode("node-b").OnlyLabels().Obj()}
	p, snap := newPlugin(t, listArgs(), nil, nodes, nil)
	_, s := p.PreFilter(context.Background(), schedcore.NewCycleState(), pod, snap.List())
	if !s.IsSuccess() {
		t.Errorf("with the gate off (v1.37.2's default), PreFilter = %v, want Success", s)
	}
}

func TestScoreWithoutPreScoreState(t *testing.T) {
	p, snap := newPlugin(t, listArgs(), nil, []*v1.Node{schedtest.MakeNode("node-a").Obj()}, nil)
	ni, _ := snap.Get("node-a")
	pod := mkPod("p").obj()
	want := `reading "PreScorePodTopologySpread" from cycleState: not found`
	if _, s := p.Score(context.Background(), schedcore.NewCycleState(), pod, ni); s.Code() != schedcore.Error || s.Message() != want {
		t.Errorf("Score = %v, want Error %q", s, want)
	}
	if s := p.NormalizeColumn(context.Background(), schedcore.NewCycleState(), pod, nil); s.Code() != schedcore.Error || s.Message() != want {
		t.Errorf("NormalizeScore = %v, want Error %q", s, want)
	}
}

func TestFilterAndScoreDoNotAllocate(t *testing.T) {
	nodes := []*v1.Node{zh2("node-a", "zone1"), zh2("node-b", "zone1"), zh2("node-x", "zone2")}
	pods := []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj()}
	pod := mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, v1.LabelHostname, dns, fooSelector).
		spread(1, "zone", sa, fooSelector).spread(1, v1.LabelHostname, sa, fooSelector).obj()
	p, snap := newPlugin(t, listArgs(), pods, nodes, nil)
	state := schedcore.NewCycleState()
	if _, s := p.PreFilter(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := p.PreScore(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
		t.Fatal(s)
	}
	ni, _ := snap.Get("node-b")
	if s := p.Filter(context.Background(), state, pod, ni); !s.IsSuccess() {
		t.Fatalf("Filter(node-b) = %v", s)
	}
	if n := testing.AllocsPerRun(100, func() { p.Filter(context.Background(), state, pod, ni) }); n != 0 {
		t.Errorf("Filter on a fitting node allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = p.Score(context.Background(), state, pod, ni) }); n != 0 {
		t.Errorf("Score allocates %v times", n)
	}
}

func zh2(name, zone string) *v1.Node {
	return schedtest.MakeNode(name).OnlyLabels("zone", zone, v1.LabelHostname, name).Obj()
}

func mustState(t *testing.T, cs *schedcore.CycleState) *preFilterState {
	t.Helper()
	s, err := schedcore.ReadAs[*preFilterState](cs, preFilterStateKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
