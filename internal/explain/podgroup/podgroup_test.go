package podgroup

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func podGroupOptions(t *testing.T, tas bool) explain.Options {
	t.Helper()
	f := schedcore.DefaultFeatures
	f.GenericWorkload, f.TopologyAwareWorkloadScheduling = true, tas
	cfg, err := engine.LoadConfigWithFeatures("", f)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	return explain.Options{Config: cfg, Registry: reg, Features: f}
}

// TestRunPodGroup: the group's cycle on the kube references' dumps: the
// verdict, the members' nodes or kube's messages, the condition and, with
// TopologyAwareWorkloadScheduling, the placements tried.
func TestRunPodGroup(t *testing.T) {
	score := func(v int64) *int64 { return &v }
	// kube's PodGroupPostFilter tail when nothing has a lower priority.
	const noVictims = ", pod group preemption: No preemption victims found for incoming preemptor"
	tests := []struct {
		name, dump, ns, group string
		tas                   bool
		fits                  bool
		members               []report.PodGroupMember
		condition             *report.PodGroupCondition
		placements            []report.PodGroupPlacement
	}{
		{name: "minCount 3 of 4: three placed, the fourth's own FitError", dump: "gang-kube-mincount", ns: "default", group: "pg1", fits: true,
			members: []report.PodGroupMember{{Pod: "default/p1", Node: "node"}, {Pod: "default/p2", Node: "node"}, {Pod: "default/p3", Node: "node"},
				{Pod: "default/p4", Message: "0/1 nodes are available: 1 Insufficient cpu."}},
			condition: &report.PodGroupCondition{Status: "True", Reason: "Scheduled"}},
		{name: "a gang of 3 where 2 fit: none placed", dump: "gang-kube-blocked", ns: "default", group: "pg1",
			members: []report.PodGroupMember{
				{Pod: "default/p1", Message: "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining" + noVictims},
				{Pod: "default/p2", Message: "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining" + noVictims},
				{Pod: "default/p3", Message: "0/1 nodes are available: 1 Insufficient cpu."}},
			condition: &report.PodGroupCondition{Status: "False", Reason: "Unschedulable", Message: "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining" + noVictims}},
		{name: "a gang that fits by preempting lower-priority pods", dump: "gang-kube-preempt", ns: "default", group: "pg1", fits: true,
			members:   []report.PodGroupMember{{Pod: "default/p1", Node: "node"}, {Pod: "default/p2", Node: "node"}, {Pod: "default/p3", Node: "node"}},
			condition: &report.PodGroupCondition{Status: "True", Reason: "Scheduled"}},
		{name: "minCount above the members: held before the queue", dump: "gang-kube-quorum", ns: "default", group: "pg1",
			members: []report.PodGroupMember{
				{Pod: "default/p1", Message: "waiting for minCount pods from a gang to appear in scheduling queue"},
				{Pod: "default/p2", Message: "waiting for minCount pods from a gang to appear in scheduling queue"}}},
		{name: "topology: the one domain with room", dump: "gang-kube-topology", ns: "default", group: "pg1", tas: true, fits: true,
			members:   []report.PodGroupMember{{Pod: "default/p1", Node: "node-b1"}, {Pod: "default/p2", Node: "node-b1"}, {Pod: "default/p3", Node: "node-b1"}},
			condition: &report.PodGroupCondition{Status: "True", Reason: "Scheduled"},
			placements: []report.PodGroupPlacement{
				{Name: "zone1", Nodes: 2, Message: "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"},
				{Name: "zone2", Nodes: 1, Feasible: true, Chosen: true}}},
		{name: "topology: three feasible racks, scored", dump: "gang-topology-24n-seed1", ns: "train", group: "rack-2", tas: true, fits: true,
			members:   []report.PodGroupMember{{Pod: "train/rack-2-0", Node: "gpu-r02-n0"}, {Pod: "train/rack-2-1", Node: "gpu-r02-n1"}, {Pod: "train/rack-2-2", Node: "gpu-r02-n2"}},
			condition: &report.PodGroupCondition{Status: "True", Reason: "Scheduled"},
			placements: []report.PodGroupPlacement{
				{Name: "rack-00", Nodes: 8, Feasible: true, Score: score(112)},
				{Name: "rack-01", Nodes: 8, Feasible: true, Score: score(116)},
				{Name: "rack-02", Nodes: 8, Feasible: true, Score: score(133), Chosen: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, err := snapshot.LoadPaths([]string{"../../../testdata/kubebench/" + tt.dump + ".yaml"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			pods := len(cl.Pods)
			rep, err := Run(context.Background(), cl, tt.ns, tt.group, podGroupOptions(t, tt.tas))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Fits != tt.fits || rep.Message == "" {
				t.Errorf("fits %v, want %v (message %q)", rep.Fits, tt.fits, rep.Message)
			}
			if diff := cmp.Diff(tt.members, rep.PodMembers); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.condition, rep.Condition); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.placements, rep.Placements); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
			if len(cl.Pods) != pods {
				t.Errorf("the cluster changed: %d pods, was %d", len(cl.Pods), pods)
			}
			for _, p := range cl.Pods {
				if n, ok := schedcore.PodGroupNameOf(p); ok && n == tt.group && p.Spec.NodeName != "" {
					t.Errorf("%s bound in the cluster", p.Name)
				}
			}
		})
	}
}

func TestRunPodGroupErrors(t *testing.T) {
	cl, err := snapshot.LoadPaths([]string{"../../../testdata/kubebench/gang-kube-blocked.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	off := podGroupOptions(t, false)
	off.Features.GenericWorkload = false
	tests := []struct {
		name      string
		ns, group string
		o         explain.Options
		want      error
	}{
		{"no such PodGroup", "default", "nope", podGroupOptions(t, false), ErrNotFound},
		{"another namespace", "other", "pg1", podGroupOptions(t, false), ErrNotFound},
		{"the gate off", "default", "pg1", off, ErrGenericWorkloadOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(context.Background(), cl, tt.ns, tt.group, tt.o); !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
}
