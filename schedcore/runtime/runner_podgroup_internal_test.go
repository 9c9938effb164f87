package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

type feasiblePlugin struct {
	name   string
	status *schedcore.Status
	called bool
}

func (p *feasiblePlugin) Name() string { return p.name }
func (p *feasiblePlugin) PlacementFeasible(context.Context, *schedcore.CycleState, schedcore.PodGroupInfo, schedcore.PlacementProgress) *schedcore.Status {
	p.called = true
	return p.status
}

// TestRunPlacementFeasiblePlugins transcribes kube v1.37.2's
// framework_test.go case for case.
func TestRunPlacementFeasiblePlugins(t *testing.T) {
	st := schedcore.NewStatus
	tests := []struct {
		name       string
		plugins    []*feasiblePlugin
		wantStatus *schedcore.Status
		wantCalled []bool
	}{
		{
			name:       "All plugins succeed",
			plugins:    []*feasiblePlugin{{name: "p1"}, {name: "p2"}},
			wantCalled: []bool{true, true},
		},
		{
			name:       "First plugin returns Wait, continues",
			plugins:    []*feasiblePlugin{{name: "p1", status: st(schedcore.Wait, "wait")}, {name: "p2"}},
			wantStatus: st(schedcore.Wait, "wait").WithPlugin("p1"),
			wantCalled: []bool{true, true},
		},
		{
			name:       "First plugin returns Unschedulable, breaks",
			plugins:    []*feasiblePlugin{{name: "p1", status: st(schedcore.Unschedulable, "unschedulable")}, {name: "p2"}},
			wantStatus: st(schedcore.Unschedulable, "unschedulable").WithPlugin("p1"),
			wantCalled: []bool{true, false},
		},
		{
			name:       "First plugin returns Wait, second returns Unschedulable, returns Unschedulable",
			plugins:    []*feasiblePlugin{{name: "p1", status: st(schedcore.Wait, "wait")}, {name: "p2", status: st(schedcore.Unschedulable, "unschedulable")}},
			wantStatus: st(schedcore.Unschedulable, "unschedulable").WithPlugin("p2"),
			wantCalled: []bool{true, true},
		},
		{
			name:       "First plugin returns Wait, second returns Wait, returns last Wait",
			plugins:    []*feasiblePlugin{{name: "p1", status: st(schedcore.Wait, "wait1")}, {name: "p2", status: st(schedcore.Wait, "wait2")}},
			wantStatus: st(schedcore.Wait, "wait2").WithPlugin("p2"),
			wantCalled: []bool{true, true},
		},
		{
			name:       "Plugin returns Error, breaks",
			plugins:    []*feasiblePlugin{{name: "p1", status: st(schedcore.Error, "error")}, {name: "p2"}},
			wantStatus: st(schedcore.Error, "running PlacementFeasible plugin: error").WithPlugin("p1"),
			wantCalled: []bool{true, false},
		},
		{
			name:       "Plugin returns unexpected status, breaks",
			plugins:    []*feasiblePlugin{{name: "p1", status: st(schedcore.Skip, "error")}, {name: "p2"}},
			wantStatus: st(schedcore.Error, "unexpected status from PlacementFeasible plugin: Skip").WithPlugin("p1"),
			wantCalled: []bool{true, false},
		},
	}
	type view struct{ Code, Message, Plugin string }
	v := func(s *schedcore.Status) view { return view{s.Code().String(), s.Message(), s.Plugin()} }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{}
			for _, p := range tc.plugins {
				f.placementFeasible = append(f.placementFeasible, p)
			}
			got := f.RunPlacementFeasiblePlugins(context.Background(), schedcore.NewCycleState(), nil, schedcore.PlacementProgress{})
			if diff := cmp.Diff(v(tc.wantStatus), v(got)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			var called []bool
			for _, p := range tc.plugins {
				called = append(called, p.called)
			}
			if diff := cmp.Diff(tc.wantCalled, called); diff != "" {
				t.Errorf("called (-want +got):\n%s", diff)
			}
		})
	}
}
