package runtime

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestListedPositionsHoldOnlyForTheirNodes checks that the positions the
// filter loop records are given to RunScorePlugins only for the very list
// of feasible nodes they were recorded with, in the snapshot they index,
// before the snapshot changes.
func TestListedPositionsHoldOnlyForTheirNodes(t *testing.T) {
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := range 3 {
		cache.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i)}})
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	other := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(other)
	var l listedNodes
	record := func() []*schedcore.NodeInfo {
		pos := l.start(snap, 2)
		*pos = append(*pos, 2, 0)
		l.nodes = []*schedcore.NodeInfo{snap.List()[2], snap.List()[0]}
		return l.nodes
	}
	feasible := record()
	for _, tc := range []struct {
		name  string
		snap  *schedcore.Snapshot
		nodes []*schedcore.NodeInfo
		want  bool
	}{
		{"the recorded nodes", snap, feasible, true},
		{"an equal list of the same nodes", snap, append([]*schedcore.NodeInfo(nil), feasible...), false},
		{"a shorter list", snap, feasible[:1], false},
		{"another snapshot", other, feasible, false},
		{"no snapshot", nil, feasible, false},
	} {
		if got := l.positions(tc.snap, tc.nodes) != nil; got != tc.want {
			t.Errorf("%s: positions given %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := l.positions(snap, feasible); len(got) != 2 || got[0] != 2 || got[1] != 0 {
		t.Errorf("positions %v, want [2 0]", got)
	}
	cache.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"a": "b"}}})
	cache.UpdateSnapshot(snap)
	if l.positions(snap, feasible) != nil {
		t.Error("positions given after the snapshot changed")
	}
	feasible = record()
	l.release()
	if l.positions(snap, feasible) != nil {
		t.Error("positions given after release")
	}
}

// TestCycleRunTravelsWithItsState checks what a cycle state carries of the
// runner's state: the state's own run, through CycleState.ListedPositions;
// for a clone (preemption's "what if"), the filter set alone, never the
// list positions, the score buffers or the caller's options; after Reset,
// nothing.
func TestCycleRunTravelsWithItsState(t *testing.T) {
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := range 2 {
		cache.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i)}})
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	state := schedcore.NewCycleState()
	if state.FeasibleListed(snap, snap.List()) {
		t.Fatal("a state without a run says its nodes are the listed feasible ones")
	}
	fw := &Framework{}
	cr := runOf(state)
	if runOf(state) != cr || peekRun(state) != cr {
		t.Fatal("runOf and peekRun do not give the state's run")
	}
	cr.filters, cr.filtersFor, cr.noNominatedPods = make([]schedcore.FilterPlugin, 1), fw, true
	cr.opts, cr.scoreBufs = CycleOptions{ReuseScoreBuffers: true, DiagnoseFailuresOnly: true}, fw
	pos := cr.listed.start(snap, 2)
	*pos = append(*pos, 0, 1)
	cr.listed.nodes = snap.List()
	if got := state.Runner().ListedPositions(snap, snap.List()); len(got) != 2 || !state.FeasibleListed(snap, snap.List()) {
		t.Errorf("the state gives positions %v, want [0 1]", got)
	}

	clone := state.Clone()
	cc, ok := clone.Runner().(*cycleRun)
	if !ok || cc == cr {
		t.Fatalf("the clone's run is %v, want a copy", clone.Runner())
	}
	if len(cc.filters) != 1 || cc.filtersFor != fw || !cc.noNominatedPods {
		t.Errorf("the clone's filter set is %v for %p (no nominated pods %v), want the state's", cc.filters, cc.filtersFor, cc.noNominatedPods)
	}
	if cc.opts != (CycleOptions{}) || cc.scoreBufs != nil || clone.FeasibleListed(snap, snap.List()) {
		t.Errorf("the clone carries options %+v, buffers %p, positions %v; want none", cc.opts, cc.scoreBufs, cc.ListedPositions(snap, snap.List()))
	}

	cr.listed.release()
	state.Reset()
	if state.Runner() != nil || peekRun(state) != &emptyRun {
		t.Errorf("after Reset the state carries %v", state.Runner())
	}
}
