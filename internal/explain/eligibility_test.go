package explain

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// kube's TestPodEligibleToPreemptOthers (plugins/defaultpreemption), each
// case as a cluster: explain's preemption line and the dry-run's cycle give
// the same answer, since both ask DefaultPreemption's PostFilter about the
// pod as the scheduler's cycle sees it, nominated node included. The pod
// group cases need GenericWorkload (off in v1.37) and are left out; one
// more case has a terminating pod that is no victim (not of lower
// priority: kube's isPreemptionAllowed).
func TestPreemptionEligibilityIsTheCycles(t *testing.T) {
	const (
		lowPriority  = 0
		highPriority = 100
	)
	never := v1.PreemptNever
	// terminating is kube's st.MakePod().Terminating(), with the
	// DisruptionTarget condition preemption sets when byPreemption.
	terminating := func(p *v1.Pod, byPreemption bool) *v1.Pod {
		p.DeletionTimestamp = &metav1.Time{Time: p.CreationTimestamp.Add(1)}
		if byPreemption {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler})
		}
		return p
	}
	nominated := func(p *v1.Pod, node string) *v1.Pod {
		p.Status.NominatedNodeName = node
		return p
	}
	preemptor := func() *v1.Pod {
		return st.MakePod("p").Namespace("ns").UID("p").Priority(highPriority).Req("cpu", "2").Created(2).Obj()
	}
	victim := func() *v1.Pod {
		return st.MakePod("p1").Namespace("ns").UID("p1").Priority(lowPriority).Req("cpu", "3").Node("node1").Created(1).Obj()
	}
	tests := []struct {
		name  string
		pod   *v1.Pod
		pods  []*v1.Pod
		nodes []*v1.Node
		// want is kube's full FitError message with the PostFilter's.
		want string
	}{
		{
			name:  "Pod with nominated node",
			pod:   nominated(preemptor(), "node1"),
			pods:  []*v1.Pod{terminating(victim(), false)},
			nodes: []*v1.Node{node("node1").Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()},
			want:  "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:  "Pod with nominated node whose status is unresolvable, its victim terminating",
			pod:   nominated(preemptor(), "node1"),
			pods:  []*v1.Pod{terminating(victim(), true)},
			nodes: []*v1.Node{node("node1").Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()},
			want:  "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
		},
		{
			name:  "Pod without nominated node",
			pod:   preemptor(),
			pods:  []*v1.Pod{victim()},
			nodes: []*v1.Node{node("node1").Obj()},
			want:  "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node node1, preempting 1 victims",
		},
		{
			name: "Pod with 'PreemptNever' preemption policy",
			pod: func() *v1.Pod {
				p := preemptor()
				p.Spec.PreemptionPolicy = &never
				return p
			}(),
			pods:  []*v1.Pod{victim()},
			nodes: []*v1.Node{node("node1").Obj()},
			want:  "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name:  "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
			pod:   nominated(preemptor(), "node1"),
			pods:  []*v1.Pod{terminating(victim(), true)},
			nodes: []*v1.Node{node("node1").Obj()},
			want:  "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.",
		},
		{
			name: "a pod of higher priority terminating by preemption on the nominated node is no victim of this one",
			pod:  nominated(preemptor(), "node1"),
			pods: []*v1.Pod{func() *v1.Pod {
				p := terminating(victim(), true)
				p.Spec.Priority = ptr(int32(highPriority + 1))
				return p
			}()},
			nodes: []*v1.Node{node("node1").Obj()},
			want:  "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
		{
			name:  "non-victim Pods terminating",
			pod:   nominated(preemptor(), "node1"),
			pods:  []*v1.Pod{terminating(victim(), false)},
			nodes: []*v1.Node{node("node1").Obj()},
			want:  "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node node1, preempting 1 victims",
		},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := &snapshot.Cluster{Nodes: tc.nodes, Pods: append(append([]*v1.Pod{}, tc.pods...), tc.pod)}
			rep, err := Run(ctx, cl, tc.pod, options(t))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Preemption == nil {
				t.Fatalf("explain: no preemption outcome (message %q)", rep.Message)
			}
			if got := rep.Message + " " + rep.Preemption.Message; got != tc.want {
				t.Errorf("explain:\n got %q\nwant %q", got, tc.want)
			}

			// The dry-run's engine, its first cycle of the pod.
			o := options(t)
			var first string
			c, pending, err := engine.NewOffline(ctx, cl, engine.Options{Config: o.Config, Registry: o.Registry}, engine.Observer{
				Failed: func(pod *v1.Pod, f engine.Failure) {
					if pod.Name == tc.pod.Name && f.Attempts == 1 {
						first = f.Status.Message()
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			c.Submit(pending...)
			if err := c.Run(ctx); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if first != tc.want {
				t.Errorf("the dry-run's cycle:\n got %q\nwant %q", first, tc.want)
			}
		})
	}
}
