package plugins_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// explain diagnoses a rejected node from the cycle's own status for it:
// the filters before the rejecting one are not run again, and only those
// after it are (schedcore's diagnoseAfter). On random clusters, under the
// default profile and with pods nominated to nodes (which the shortcut
// must leave to the two-pass diagnosis), every rejected node must get the
// verdicts DiagnoseFilterPluginsWithNominatedPods gives it running every
// filter on the cycle's state: the same plugins, statuses and shortfalls.
func TestExplainDiagnosesRejectedNodesAsEveryFilterWould(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	for i := 0; i < 16; i++ {
		n := randomNode(rng, i)
		n.Spec.Unschedulable = i%5 == 2
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
	cl := &randomCluster{rng: rng, cache: cache, nodes: 16}
	// several counts, per plugin, the rejected nodes it is not the first
	// rejecting filter of: the test must see verdicts after the first.
	several := map[string]int{}
	for step := 0; step < 250; step++ {
		p := randomPod(rng, fmt.Sprintf("p%d", step))
		p.UID = types.UID(fmt.Sprint("uid-", step))
		cl.change(p)
		cache.UpdateSnapshot(snap)
		clear(nominated)
		if step%2 == 0 {
			for k := rng.Intn(3); k > 0; k-- {
				np := randomPod(rng, fmt.Sprintf("nominated-%d-%d", step, k))
				np.UID = types.UID(np.Name)
				np.Spec.Priority = new(int32(rng.Intn(2) * 1000))
				node := fmt.Sprintf("node-%d", rng.Intn(cl.nodes))
				nominated[node] = append(nominated[node], schedcore.NewPodInfo(np))
			}
		}
		pod := randomPod(rng, "incoming")
		pod.UID = "incoming"
		if rng.Intn(2) == 0 {
			pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse([]string{"5", "7", "9"}[rng.Intn(3)])
		}
		ex := schedruntime.ExplainShortfalls(ctx, fw, snap, pod, nil, nil)
		for i := range ex.Nodes {
			ne := &ex.Nodes[i]
			if ne.Feasible || len(ne.Failures) == 0 {
				continue
			}
			ni, err := snap.Get(ne.Name)
			if err != nil {
				t.Fatal(err)
			}
			want := &schedruntime.NodeExplanation{Name: ne.Name, Failures: fw.DiagnoseFilterPluginsWithNominatedPods(ctx, ex.State, pod, ni), Nominated: ne.Nominated}
			if d := cmp.Diff(verdictSummary(want), verdictSummary(ne)); d != "" {
				t.Fatalf("step %d, node %s: verdicts differ from every filter's (-every filter +explain):\n%s", step, ne.Name, d)
			}
			for _, v := range ne.Failures[1:] {
				several[v.Plugin]++
			}
		}
	}
	if len(several) < 2 {
		t.Errorf("verdicts after the first rejecting filter came from %v only: the random clusters do not test the filters after it", several)
	}
}
