package plugins_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/plugins/interpodaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodeaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodename"
	"github.com/kubectl-sched/kubectl-sched/plugins/noderesources"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodeunschedulable"
	"github.com/kubectl-sched/kubectl-sched/plugins/podtopologyspread"
	"github.com/kubectl-sched/kubectl-sched/plugins/tainttoleration"
	"github.com/kubectl-sched/kubectl-sched/plugins/volumebinding"
	"github.com/kubectl-sched/kubectl-sched/plugins/volumerestrictions"
	"github.com/kubectl-sched/kubectl-sched/plugins/volumezone"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// The plugins that give their shortfall alone (a method signature gone
// wrong would silently fall back to the whole explanation).
var _ = []schedcore.ShortfallExplainer{
	(*interpodaffinity.InterPodAffinity)(nil), (*nodeaffinity.NodeAffinity)(nil), (*nodename.NodeName)(nil),
	(*noderesources.Fit)(nil), (*nodeunschedulable.NodeUnschedulable)(nil), (*podtopologyspread.PodTopologySpread)(nil),
	(*tainttoleration.TaintToleration)(nil), (*volumebinding.VolumeBinding)(nil), (*volumerestrictions.VolumeRestrictions)(nil),
	(*volumezone.VolumeZone)(nil),
}

// explain ranks every rejected node by the plugins' shortfalls alone
// (schedruntime.ExplainShortfalls, each ShortfallExplainer's FilterShortfall)
// and builds the gaps of the nodes it prints only (Explanation.Detail).
// On random clusters, under the default profile and with pods nominated
// to nodes, every rejected node must get exactly the verdicts Explain
// gives it: the same plugins, statuses and shortfalls before Detail, the
// same explanations after.
func TestShortfallsMatchExplanations(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	for i := 0; i < 16; i++ {
		n := randomNode(rng, i)
		n.Spec.Unschedulable = i%7 == 3
		cache.AddNode(n)
	}
	nominated := nominatedPods{}
	h := schedcore.NewHandle(snap, 2, schedcore.WithNominator(nominated))
	ctx := context.Background()
	name := v1.DefaultSchedulerName
	prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins.DefaultPlugins()}
	fw, err := schedruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), prof, h, schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// fractional counts, per plugin, the verdicts with a shortfall under 1:
	// the test must see plugins that measure, not only constant 1s.
	fractional := map[string]int{}
	verdicts := 0
	// explainedBy counts, per plugin, Explain's verdicts with gaps.
	explainedBy := map[string]int{}
	cl := &randomCluster{rng: rng, cache: cache, nodes: 16}
	for step := 0; step < 250; step++ {
		p := randomPod(rng, fmt.Sprintf("p%d", step))
		p.UID = types.UID(fmt.Sprint("uid-", step))
		cl.change(p)
		cache.UpdateSnapshot(snap)
		clear(nominated)
		for k := rng.Intn(3); k > 0; k-- {
			np := randomPod(rng, fmt.Sprintf("nominated-%d-%d", step, k))
			np.UID = types.UID(np.Name)
			np.Spec.Priority = new(int32(rng.Intn(2) * 1000))
			node := fmt.Sprintf("node-%d", rng.Intn(cl.nodes))
			nominated[node] = append(nominated[node], schedcore.NewPodInfo(np))
		}
		pod := randomPod(rng, "incoming")
		pod.UID = "incoming"
		// Large requests too, so that NodeResourcesFit rejects nodes by a
		// share of what the pod asks, for one resource or two.
		reqs := pod.Spec.Containers[0].Resources.Requests
		if rng.Intn(2) == 0 {
			reqs[v1.ResourceCPU] = resource.MustParse([]string{"5", "7", "9"}[rng.Intn(3)])
		}
		if rng.Intn(3) == 0 {
			reqs[v1.ResourceMemory] = resource.MustParse([]string{"10Gi", "15Gi", "20Gi"}[rng.Intn(3)])
		}
		// Two hard spread constraints at times, so that PodTopologySpread
		// rejects nodes for both, by different shares.
		if rng.Intn(3) == 0 {
			for _, key := range []string{v1.LabelTopologyZone, "rack"} {
				pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
					MaxSkew: int32(1 + rng.Intn(2)), TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": apps[rng.Intn(len(apps))]}},
				})
			}
		}
		full := schedruntime.Explain(ctx, fw, snap, pod, nil)
		short := schedruntime.ExplainShortfalls(ctx, fw, snap, pod, nil, nil)
		if len(full.Nodes) != len(short.Nodes) {
			t.Fatalf("step %d: %d nodes explained, %d with shortfalls only", step, len(full.Nodes), len(short.Nodes))
		}
		for i := range full.Nodes {
			want, got := &full.Nodes[i], &short.Nodes[i]
			if d := cmp.Diff(verdictSummary(want), verdictSummary(got)); d != "" {
				t.Fatalf("step %d, node %s: shortfall-only verdicts differ (-full +shortfalls):\n%s", step, want.Name, d)
			}
			for _, v := range append(append([]schedruntime.FilterVerdict(nil), got.Failures...), got.LeftOutBy...) {
				verdicts++
				if v.Shortfall < 1 {
					fractional[v.Plugin]++
				}
				if v.Explanation != nil {
					t.Fatalf("step %d, node %s: %s has an explanation before Detail", step, want.Name, v.Plugin)
				}
			}
			for _, v := range want.Failures {
				if v.Explanation != nil && len(v.Explanation.Gaps) > 0 {
					explainedBy[v.Plugin]++
				}
			}
			short.Detail(ctx, i)
			if d := cmp.Diff(explained(want), explained(got)); d != "" {
				t.Fatalf("step %d, node %s: explanations after Detail differ (-Explain +Detail):\n%s", step, want.Name, d)
			}
		}
	}
	for _, pl := range []string{"NodeResourcesFit", "PodTopologySpread", "NodeAffinity", "TaintToleration", "InterPodAffinity", "NodeUnschedulable"} {
		if explainedBy[pl] == 0 {
			t.Errorf("Explain gave no %s verdict gaps: the random clusters do not test its explanations", pl)
		}
	}
	for _, pl := range []string{"NodeResourcesFit", "PodTopologySpread"} {
		if fractional[pl] == 0 {
			t.Errorf("no %s verdict with a shortfall under 1 among %d verdicts: the random clusters do not test its FilterShortfall", pl, verdicts)
		}
	}
}

// nominatedPods are the pods nominated to each node.
type nominatedPods map[string][]*schedcore.PodInfo

func (n nominatedPods) NominatedPodsForNode(node string) []*schedcore.PodInfo { return n[node] }

// verdictSummary is what a node's verdicts say without explanations.
func verdictSummary(ne *schedruntime.NodeExplanation) []string {
	out := []string{fmt.Sprint("feasible ", ne.Feasible, " nominated ", len(ne.Nominated))}
	for _, vs := range [2][]schedruntime.FilterVerdict{ne.Failures, ne.LeftOutBy} {
		for _, v := range vs {
			out = append(out, fmt.Sprint(v.Plugin, " ", v.Status.Code(), " ", v.Status.Reasons(), " shortfall ", v.Shortfall))
		}
	}
	return out
}

// explained is what a node's verdicts say, explanations included.
func explained(ne *schedruntime.NodeExplanation) []string {
	out := verdictSummary(ne)
	for _, vs := range [2][]schedruntime.FilterVerdict{ne.Failures, ne.LeftOutBy} {
		for _, v := range vs {
			if v.Explanation == nil {
				out = append(out, v.Plugin+": no explanation")
				continue
			}
			out = append(out, fmt.Sprint(v.Plugin, ": shortfall ", v.Explanation.Shortfall))
			for _, g := range v.Explanation.Gaps {
				out = append(out, fmt.Sprint(v.Plugin, ": ", g.Text, " ", g.Details))
			}
		}
	}
	return out
}
