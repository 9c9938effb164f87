package defaultpreemption_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/plugins/defaultpreemption"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func candidateNames(cs []*defaultpreemption.Candidate) []string {
	var out []string
	for _, c := range cs {
		s := c.Node + ":"
		for i, v := range c.Victims {
			if i > 0 {
				s += ","
			}
			s += v.Name
		}
		out = append(out, s)
	}
	return out
}

func TestDryRunPreemption(t *testing.T) {
	five := func() ([]*v1.Node, []*v1.Pod) {
		var nodes []*v1.Node
		var pods []*v1.Pod
		for _, n := range []string{"node1", "node2", "node3", "node4", "node5"} {
			nodes = append(nodes, node(n, "1"))
			pods = append(pods, schedtest.MakePod("v-"+n).Node(n).Req("cpu", "1").Obj())
		}
		return nodes, pods
	}
	tests := []struct {
		name   string
		args   *configv1.DefaultPreemptionArgs
		offset int32
		pdbs   bool
		want   []string
	}{
		{name: "every node is a candidate with the default args", want: []string{"node1:v-node1", "node2:v-node2", "node3:v-node3", "node4:v-node4", "node5:v-node5"}},
		{
			name: "minCandidateNodesAbsolute limits the candidates to 2",
			args: &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr.To[int32](0), MinCandidateNodesAbsolute: ptr.To[int32](2)},
			want: []string{"node1:v-node1", "node2:v-node2"},
		},
		{
			name:   "the scan starts at the offset and wraps around",
			args:   &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr.To[int32](0), MinCandidateNodesAbsolute: ptr.To[int32](3)},
			offset: 3,
			want:   []string{"node4:v-node4", "node5:v-node5", "node1:v-node1"},
		},
		{
			name:   "the scan looks past the number of candidates until one violates no PDB",
			args:   &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr.To[int32](0), MinCandidateNodesAbsolute: ptr.To[int32](2)},
			pdbs:   true,
			offset: 0,
			want:   []string{"node3:v-node3", "node1:v-node1", "node2:v-node2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, pods := five()
			var pdbs []*policyv1.PodDisruptionBudget
			if tc.pdbs {
				for _, p := range pods[:2] {
					p.Labels = map[string]string{"app": "guarded"}
				}
				pdbs = append(pdbs, pdb("guard", 0, map[string]string{"app": "guarded"}))
			}
			e := newEnv(t, nodes, pods, pdbs, tc.args, nil, tc.offset)
			pod := schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj()
			state, fe := e.filter(t, pod)
			pl := e.plugin(t)
			potential := fe.Diagnosis.NodeToStatus.NodesForStatusCode(e.snap.List(), schedcore.Unschedulable)
			off, num := pl.GetOffsetAndNumCandidates(int32(len(potential)))
			cs, _, err := pl.DryRunPreemption(context.Background(), state, pod, potential, pdbs, off, num)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, candidateNames(cs)); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
}

func (e *env) filter(t *testing.T, pod *v1.Pod) (*schedcore.CycleState, *schedcore.FitError) {
	t.Helper()
	alg := &schedruntime.Algorithm{Snapshot: e.snap, PercentageOfNodesToScore: 100}
	state := schedcore.NewCycleState()
	_, _, err := alg.SchedulePod(context.Background(), e.fw, state, pod)
	var fe *schedcore.FitError
	if !errors.As(err, &fe) {
		t.Fatalf("SchedulePod: want a FitError, got %v", err)
	}
	return state, fe
}

func (e *env) plugin(t *testing.T) *defaultpreemption.DefaultPreemption {
	t.Helper()
	p, ok := e.fw.Plugin(names.DefaultPreemption)
	if !ok {
		t.Fatal("DefaultPreemption is not in the profile")
	}
	return p.(*defaultpreemption.DefaultPreemption)
}

func TestSelectCandidate(t *testing.T) {
	at := func(sec int) *metav1.Time {
		tm := metav1.NewTime(epoch.Add(time.Duration(sec) * time.Second))
		return &tm
	}
	pod := func(name string, prio int32, start int) *v1.Pod {
		p := schedtest.MakePod(name).Priority(prio).Obj()
		p.Status.StartTime = at(start)
		return p
	}
	c := func(node string, pdbViolations int, victims ...*v1.Pod) *defaultpreemption.Candidate {
		return &defaultpreemption.Candidate{Node: node, NumPDBViolations: pdbViolations, Victims: victims}
	}
	tests := []struct {
		name string
		cs   []*defaultpreemption.Candidate
		want string
	}{
		{name: "fewest PDB violations first", cs: []*defaultpreemption.Candidate{c("n1", 1, pod("a", 1, 0)), c("n2", 0, pod("b", 9, 0))}, want: "n2"},
		{name: "then the lowest priority of the most important victim", cs: []*defaultpreemption.Candidate{c("n1", 0, pod("a", 5, 0)), c("n2", 0, pod("b", 3, 0), pod("c", 2, 0))}, want: "n2"},
		{name: "then the smallest sum of priorities", cs: []*defaultpreemption.Candidate{c("n1", 0, pod("a", 5, 0), pod("b", 3, 0)), c("n2", 0, pod("c", 5, 0), pod("d", 2, 0))}, want: "n2"},
		{name: "then the fewest victims", cs: []*defaultpreemption.Candidate{c("n1", 0, pod("a", 5, 0), pod("b", 0, 0)), c("n2", 0, pod("c", 5, 0))}, want: "n2"},
		{
			name: "sums are of priorities shifted by 2^31, so more negative victims do not win",
			cs:   []*defaultpreemption.Candidate{c("n1", 0, pod("a", -10, 0), pod("b", -10, 0)), c("n2", 0, pod("c", -10, 0))},
			want: "n2",
		},
		{name: "then the latest start of the highest-priority victims", cs: []*defaultpreemption.Candidate{c("n1", 0, pod("a", 5, 10), pod("b", 1, 99)), c("n2", 0, pod("c", 5, 20), pod("d", 1, 0))}, want: "n2"},
		{name: "a tie after every rule goes to the first candidate", cs: []*defaultpreemption.Candidate{c("n2", 0, pod("a", 5, 10)), c("n1", 0, pod("b", 5, 10))}, want: "n2"},
	}
	e := newEnv(t, []*v1.Node{node("n1", "1")}, nil, nil, nil, nil, 0)
	pl := e.plugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pl.SelectCandidate(tc.cs).Node; got != tc.want {
				t.Errorf("SelectCandidate = %s, want %s", got, tc.want)
			}
		})
	}
}
