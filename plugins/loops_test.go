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

// A long-lived default-profile framework and Algorithm take every
// shortcut of the filter and score loops: the loops go through the
// snapshot's list by position and read the nodes' generations and names
// from the snapshot's columns, the framework remembers NodeLocalFilter
// verdicts (passes and shared rejections: NodeUnschedulable,
// TaintToleration, NodeAffinity, NodeResourcesFit) and NodeLocalScorer
// scores by list position, and the Parallelizer runs no more workers than
// CPUs. Cycle after cycle, with pods placed and removed, nodes relabelled,
// cordoned, added and removed in between, they must find the same
// feasible nodes in the same order (kube's sampling windows and
// rotation of the start node included), with the same statuses and
// scores, and choose the same node, as a fresh framework whose cycles
// take the plain path (a cycle that times every plugin: node by node
// through the NodeInfos, nothing remembered).
func TestScheduleWithShortcutsMatchesPlainCycles(t *testing.T) {
	// 300 nodes: the adaptive sample (0) finds 144 feasible nodes in
	// windows and rotates the start; 100 filters every node.
	for _, pct := range []int32{0, 100} {
		t.Run(fmt.Sprint("percentage=", pct), func(t *testing.T) { checkShortcutCycles(t, pct, 300, false) })
	}
	// Every node with a zone and a rack: PodTopologySpread's PreScore
	// stops its pass over the feasible nodes once each key has all its
	// domains.
	t.Run("labelled", func(t *testing.T) { checkShortcutCycles(t, 100, 300, true) })
}

func checkShortcutCycles(t *testing.T, pct int32, numNodes int, labelled bool) {
	rng := rand.New(rand.NewSource(int64(23 + pct)))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	cl := &randomCluster{rng: rng, cache: cache, nodes: numNodes, cordoned: true, labelled: labelled}
	for i := 0; i < numNodes; i++ {
		cache.AddNode(cl.node(i))
	}
	cache.UpdateSnapshot(snap)
	ctx := context.Background()
	// Pods nominated to nodes, now and then: the filter loop must then add
	// them to their node as kube does (the plain path, node by node).
	nominated := countedNominations{}
	newFramework := func() *schedruntime.Framework {
		name := v1.DefaultSchedulerName
		prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins.DefaultPlugins()}
		fw, err := schedruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), prof, schedcore.NewHandle(snap, 16, schedcore.WithNominator(nominated)), schedruntime.FrameworkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fw
	}
	long, longAlg := newFramework(), &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: pct}
	plainAlg := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: pct}
	schedule := func(alg *schedruntime.Algorithm, fw *schedruntime.Framework, pod *v1.Pod, plain bool) (string, []string) {
		state := schedcore.NewCycleState()
		state.RecordPluginMetrics = plain
		res, diag, err := alg.SchedulePod(ctx, fw, state, pod)
		out := []string{fmt.Sprint("host ", res.SuggestedHost, " evaluated ", res.EvaluatedNodes, " feasible ", res.FeasibleNodes, " err ", err)}
		for _, ns := range res.Scores {
			out = append(out, fmt.Sprint(ns.Name, ns.RawScores, ns.Scores, ns.TotalScore))
		}
		if diag != nil {
			// In the order the filter loop set them.
			diag.NodeToStatus.ForEachExplicitNode(func(node string, s *schedcore.Status) {
				out = append(out, fmt.Sprint(node, " ", s.Code(), " ", s.Plugin(), " ", s.Reasons()))
			})
			out = append(out, fmt.Sprint("absent ", diag.NodeToStatus.AbsentNodesStatus(), " plugins ", diag.UnschedulablePlugins))
		}
		return res.SuggestedHost, out
	}
	// Few workloads, as in a real cluster: consecutive cycles share keys.
	workloads := make([]*v1.Pod, 8)
	for i := range workloads {
		workloads[i] = randomPod(rng, fmt.Sprintf("w%d", i))
		if i%4 == 0 {
			workloads[i].Spec.Tolerations = append(workloads[i].Spec.Tolerations, v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists})
		}
	}
	// Pods that fit nowhere (a rack no node has) and pods that fill
	// nodes up (7 of their 8 cpus), for rejections by every filter.
	workloads[6].Spec.NodeSelector = map[string]string{"rack": "r9"}
	workloads[7].Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("7")
	copyOf := func(w *v1.Pod, name string) *v1.Pod {
		p := w.DeepCopy()
		p.Name, p.UID = name, types.UID("uid-"+name)
		return p
	}
	failed := 0
	for step := 0; step < 200; step++ {
		if rng.Intn(3) == 0 {
			cl.change(copyOf(workloads[rng.Intn(len(workloads))], fmt.Sprintf("c%d", step)))
			cache.UpdateSnapshot(snap)
		}
		switch {
		case rng.Intn(10) == 0:
			n := copyOf(workloads[7], fmt.Sprintf("nominated%d", step))
			node := fmt.Sprintf("node-%d", rng.Intn(cl.nodes))
			nominated[node] = append(nominated[node], schedcore.NewPodInfo(n))
		case rng.Intn(4) == 0:
			clear(nominated)
		}
		pod := copyOf(workloads[rng.Intn(len(workloads))], fmt.Sprintf("p%d", step))
		_, want := schedule(plainAlg, newFramework(), pod, true)
		host, got := schedule(longAlg, long, pod, false)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: a cycle with the shortcuts differs from a plain one (-plain +shortcuts):\n%s", step, diff)
		}
		if host == "" {
			failed++
			continue
		}
		pod.Spec.NodeName = host
		if err := cache.AddPod(pod); err != nil {
			t.Fatal(err)
		}
		cl.placed = append(cl.placed, pod)
		cache.UpdateSnapshot(snap)
	}
	if failed < 5 || failed > 150 {
		t.Errorf("%d of 200 pods found no node: the cases do not mix fitting and failing pods", failed)
	}
}

// countedNominations are pods nominated to nodes, by node name, that say
// how many there are (so that cycles without any skip the per-node
// lookups, as with the scheduler's queue).
type countedNominations map[string][]*schedcore.PodInfo

func (n countedNominations) NominatedPodsForNode(node string) []*schedcore.PodInfo { return n[node] }

func (n countedNominations) NumNominatedPods() int {
	c := 0
	for _, pods := range n {
		c += len(pods)
	}
	return c
}
