package plugins_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// defaultFramework is a framework of the default profile over snap.
func defaultFramework(t *testing.T, snap *schedcore.Snapshot) *schedruntime.Framework {
	t.Helper()
	name := v1.DefaultSchedulerName
	prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins.DefaultPlugins()}
	fw, err := schedruntime.NewFramework(context.Background(), plugins.NewInTreeRegistry(), prof, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

// cycleVerdicts runs a cycle's PreFilter, every node's Filter, PreScore and
// Score in snap, and a scheduler cycle, and lists what each said, sorted
// (so that two snapshots listing the nodes in another order compare).
// reference times every plugin, which turns off every shortcut (memos,
// uniform scores).
func cycleVerdicts(t *testing.T, fw *schedruntime.Framework, snap *schedcore.Snapshot, pod *v1.Pod, reference bool) []string {
	t.Helper()
	ctx := context.Background()
	state := schedcore.NewCycleState()
	state.RecordPluginMetrics = reference
	if _, s, _ := fw.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
		return []string{"prefilter " + s.Message()}
	}
	var out []string
	for _, ni := range snap.List() {
		s := fw.RunFilterPlugins(ctx, state, pod, ni)
		out = append(out, fmt.Sprint(ni.Name(), " filter ", s.Code(), " ", s.Plugin(), " ", s.Reasons()))
	}
	if s := fw.RunPreScorePlugins(ctx, state, pod, snap.List()); !s.IsSuccess() {
		t.Fatal(s.AsError())
	}
	scores, s := fw.RunScorePlugins(ctx, state, pod, snap.List())
	if !s.IsSuccess() {
		t.Fatal(s.AsError())
	}
	for _, ns := range scores {
		out = append(out, fmt.Sprint(ns.Name, ns.RawScores, ns.Scores, ns.TotalScore))
	}
	out = append(out, scheduleOutcome(ctx, fw, snap, pod, !reference)...)
	sort.Strings(out)
	return out
}

// freshSnapshot builds a snapshot from scratch of nodes (added in that
// order: the first node reporting an image gives its size) and of every
// pod on snap's nodes, assumed ones included.
func freshSnapshot(snap *schedcore.Snapshot, nodes []*v1.Node) *schedcore.Snapshot {
	var pods []*v1.Pod
	for _, ni := range snap.List() {
		for _, pi := range ni.Pods {
			pods = append(pods, pi.Pod)
		}
	}
	return schedcore.NewSnapshot(pods, nodes)
}

// TestAssumedPodsMatchFreshSnapshot: pods assumed in the snapshot and
// forgotten (Snapshot.AssumePod/ForgetPod, a pod-group cycle's
// simulation), in random order on random nodes, between random changes of
// the cache: after each assume and each forget, a long-lived
// default-profile framework, whose plugins and runner remember verdicts
// and scores by node generation (VerdictMemo, NodeMemo, score memos,
// MatchCounter, the pod label index, DomainTotals), filters and scores
// every node, and schedules, as a fresh framework over a snapshot built
// from scratch with the same pods, every shortcut off. A memo filled
// while a pod was assumed must not serve the node after its forget, nor
// one filled before serve the node with the pod.
func TestAssumedPodsMatchFreshSnapshot(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	const numNodes = 10
	var nodes []*v1.Node
	for i := range numNodes {
		nodes = append(nodes, randomNode(rng, i))
		cache.AddNode(nodes[i])
	}
	cache.UpdateSnapshot(snap)
	long := defaultFramework(t, snap)
	workloads := make([]*v1.Pod, 6)
	for i := range workloads {
		workloads[i] = randomPod(rng, fmt.Sprintf("w%d", i))
	}
	instance := func(name string) *v1.Pod {
		p := workloads[rng.Intn(len(workloads))].DeepCopy()
		p.Name, p.UID = name, types.UID("uid-"+name)
		p.Spec.NodeName = fmt.Sprintf("node-%d", rng.Intn(numNodes))
		return p
	}
	checks := 0
	check := func(step int, what string) {
		t.Helper()
		checks++
		pod := workloads[rng.Intn(len(workloads))]
		fresh := freshSnapshot(snap, nodes)
		want := cycleVerdicts(t, defaultFramework(t, fresh), fresh, pod, true)
		if diff := cmp.Diff(want, cycleVerdicts(t, long, snap, pod, false)); diff != "" {
			t.Fatalf("step %d, %s: long-lived framework differs from a fresh one on a fresh snapshot (-fresh +long-lived):\n%s", step, what, diff)
		}
	}
	// The cache changes by pods only: a node's image summaries, which
	// the cache does not refresh when other nodes change (kube's quirk),
	// then stay what a fresh snapshot computes.
	var bound []*v1.Pod
	for step := range 120 {
		if len(bound) > 0 && rng.Intn(3) == 0 {
			i := rng.Intn(len(bound))
			cache.RemovePod(bound[i])
			bound = append(bound[:i], bound[i+1:]...)
		} else {
			p := instance(fmt.Sprint("b", step))
			if err := cache.AddPod(p); err != nil {
				t.Fatal(err)
			}
			bound = append(bound, p)
		}
		cache.UpdateSnapshot(snap)
		check(step, "after the update")
		// A group cycle: members assumed one by one, some forgotten
		// (a placement's revert), the rest forgotten at its end.
		var assumed []*v1.Pod
		for op := range 8 {
			if len(assumed) > 0 && rng.Intn(3) == 0 {
				p := assumed[len(assumed)-1]
				assumed = assumed[:len(assumed)-1]
				if err := snap.ForgetPod(p); err != nil {
					t.Fatal(err)
				}
				check(step, "after forgetting "+p.Name+" from "+p.Spec.NodeName)
			} else {
				p := instance(fmt.Sprintf("a%d-%d", step, op))
				if err := snap.AssumePod(schedcore.NewPodInfo(p)); err != nil {
					t.Fatal(err)
				}
				assumed = append(assumed, p)
				check(step, "after assuming "+p.Name+" on "+p.Spec.NodeName)
			}
		}
		for len(assumed) > 0 {
			p := assumed[len(assumed)-1]
			assumed = assumed[:len(assumed)-1]
			if err := snap.ForgetPod(p); err != nil {
				t.Fatal(err)
			}
			check(step, "after forgetting "+p.Name+" from "+p.Spec.NodeName)
		}
	}
	if checks < 1000 {
		t.Fatalf("only %d checks", checks)
	}
	t.Logf("%d comparisons", checks)
}

// TestMemoReadWhileAssumedSeesThePod: verdicts and scores the default
// plugins remember for a node (NodeResourcesFit's filter and score,
// NodePorts, InterPodAffinity's pod index) are not served for the node
// once a pod is assumed on it in the snapshot, and the node's own are
// served again, not those of the assumed state, after the forget.
func TestMemoReadWhileAssumedSeesThePod(t *testing.T) {
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for _, n := range []string{"n0", "n1"} {
		cache.AddNode(st.MakeNode(n).Capacity("cpu", "2", "memory", "4Gi", "pods", "10").Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	fw := defaultFramework(t, snap)
	ctx := context.Background()
	incoming := st.MakePod("in").Label("app", "x").Req("cpu", "1500m").HostPort(8080, v1.ProtocolTCP, "").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "y"}).Obj()
	verdicts := func() []string {
		state := schedcore.NewCycleState()
		if _, s, _ := fw.RunPreFilterPlugins(ctx, state, incoming); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		var out []string
		for _, ni := range snap.List() {
			s := fw.RunFilterPlugins(ctx, state, incoming, ni)
			out = append(out, fmt.Sprint(ni.Name(), " ", s.Code(), " ", s.Plugin(), " ", s.Reasons()))
		}
		if s := fw.RunPreScorePlugins(ctx, state, incoming, snap.List()); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		scores, s := fw.RunScorePlugins(ctx, state, incoming, snap.List())
		if !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		for _, ns := range scores {
			for _, ps := range ns.RawScores {
				if ps.Name == "NodeResourcesFit" {
					out = append(out, fmt.Sprint(ns.Name, " NodeResourcesFit ", ps.Score))
				}
			}
		}
		return out
	}
	idle := []string{"n0 Success  []", "n1 Success  []", "n0 NodeResourcesFit 60", "n1 NodeResourcesFit 60"}
	for _, tt := range []struct {
		name string
		pod  *v1.Pod
		want []string
	}{
		{"cpu", st.MakePod("cpu").UID("cpu").Req("cpu", "1").Node("n0").Obj(),
			[]string{"n0 Unschedulable NodeResourcesFit [Insufficient cpu]", "n1 Success  []", "n0 NodeResourcesFit 45", "n1 NodeResourcesFit 60"}},
		{"host port", st.MakePod("port").UID("port").HostPort(8080, v1.ProtocolTCP, "").Node("n1").Obj(),
			[]string{"n0 Success  []", "n1 Unschedulable NodePorts [node(s) didn't have free ports for the requested pod ports]", "n0 NodeResourcesFit 60", "n1 NodeResourcesFit 55"}},
		{"anti-affinity", st.MakePod("y").UID("y").Label("app", "y").Node("n1").Obj(),
			[]string{"n0 Success  []", "n1 Unschedulable InterPodAffinity [node(s) didn't match pod anti-affinity rules]", "n0 NodeResourcesFit 60", "n1 NodeResourcesFit 55"}},
		{"score", st.MakePod("small").UID("small").Req("cpu", "250m").Node("n1").Obj(),
			[]string{"n0 Success  []", "n1 Success  []", "n0 NodeResourcesFit 60", "n1 NodeResourcesFit 51"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(idle, verdicts()); diff != "" {
				t.Fatalf("before the assume (-want +got):\n%s", diff)
			}
			if err := snap.AssumePod(schedcore.NewPodInfo(tt.pod)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, verdicts()); diff != "" {
				t.Errorf("with %s assumed on %s (-want +got):\n%s", tt.pod.Name, tt.pod.Spec.NodeName, diff)
			}
			if err := snap.ForgetPod(tt.pod); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(idle, verdicts()); diff != "" {
				t.Errorf("after the forget (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGroupCycleOverPlacementMatchesSnapshotOfItsNodes: members of a group
// scheduled one after another by the default profile inside a placement,
// each assumed in the snapshot on the node chosen (a pod-group cycle's
// simulation), are placed as in a snapshot made of the placement's nodes
// only, listed in its order, with the same assumes; the workloads have no
// inter-pod terms and the nodes no images, which would read the whole
// cluster. Then every assume is forgotten and the placement lifted: the
// snapshot decides as before the cycle.
func TestGroupCycleOverPlacementMatchesSnapshotOfItsNodes(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	nodeLocal := func(p *v1.Pod) *v1.Pod {
		if a := p.Spec.Affinity; a != nil {
			a.PodAffinity, a.PodAntiAffinity = nil, nil
		}
		p.Spec.TopologySpreadConstraints = nil
		return p
	}
	var nodes, inPlacement []*v1.Node
	for i := range 240 {
		n := randomNode(rng, i)
		n.Status.Images = nil
		nodes = append(nodes, n)
		if rng.Intn(5) < 3 {
			inPlacement = append(inPlacement, n)
		}
	}
	rng.Shuffle(len(inPlacement), func(i, j int) { inPlacement[i], inPlacement[j] = inPlacement[j], inPlacement[i] })
	var bound, boundInPlacement []*v1.Pod
	placed := map[string]bool{}
	for _, n := range inPlacement {
		placed[n.Name] = true
	}
	for i := range 400 {
		p := nodeLocal(randomPod(rng, fmt.Sprint("b", i)))
		p.UID = types.UID(p.Name)
		p.Spec.NodeName = nodes[rng.Intn(len(nodes))].Name
		bound = append(bound, p)
		if placed[p.Spec.NodeName] {
			boundInPlacement = append(boundInPlacement, p)
		}
	}
	snap := schedcore.NewSnapshot(bound, nodes)
	only := schedcore.NewSnapshot(boundInPlacement, inPlacement)
	var placement []*schedcore.NodeInfo
	for _, ni := range only.List() {
		placement = append(placement, snap.NodeInfo(ni.Name()))
	}
	fw, onlyFw := defaultFramework(t, snap), defaultFramework(t, only)
	alg, onlyAlg := &schedruntime.Algorithm{Snapshot: snap}, &schedruntime.Algorithm{Snapshot: only}
	ctx := context.Background()
	// schedule returns the node chosen ("" when none) and the outcome.
	schedule := func(fw *schedruntime.Framework, alg *schedruntime.Algorithm, pod *v1.Pod) (string, string) {
		res, _, err := alg.SchedulePodWith(ctx, fw, schedcore.NewCycleState(), pod, schedruntime.CycleOptions{ReuseScoreBuffers: true, DiagnoseFailuresOnly: true})
		if err != nil {
			return "", err.Error()
		}
		return res.SuggestedHost, fmt.Sprint(res.SuggestedHost, " evaluated ", res.EvaluatedNodes, " feasible ", res.FeasibleNodes)
	}
	workloads := make([]*v1.Pod, 5)
	for i := range workloads {
		workloads[i] = nodeLocal(randomPod(rng, fmt.Sprint("w", i)))
	}
	if err := snap.AssumePlacement("p", placement); err != nil {
		t.Fatal(err)
	}
	var members []*v1.Pod
	for i := range 60 {
		m := workloads[rng.Intn(len(workloads))].DeepCopy()
		m.Name, m.UID = fmt.Sprint("m", i), types.UID(fmt.Sprint("m", i))
		host, got := schedule(fw, alg, m)
		if _, want := schedule(onlyFw, onlyAlg, m); got != want {
			t.Fatalf("member %d: over the placement %q, over a snapshot of its nodes %q", i, got, want)
		}
		if host == "" {
			continue
		}
		if !placed[host] {
			t.Fatalf("member %d placed on %s, outside the placement", i, host)
		}
		m.Spec.NodeName = host
		for _, s := range []*schedcore.Snapshot{snap, only} {
			if err := s.AssumePod(schedcore.NewPodInfo(m)); err != nil {
				t.Fatal(err)
			}
		}
		members = append(members, m)
	}
	if len(members) < 20 {
		t.Fatalf("only %d members placed", len(members))
	}
	for i := len(members) - 1; i >= 0; i-- {
		if err := snap.ForgetPod(members[i]); err != nil {
			t.Fatal(err)
		}
	}
	snap.ForgetPlacement()
	// Every node again, each with its own pods: the long-lived framework
	// decides as a fresh one (both algorithms start at the same index).
	freshAlg, longAlg := &schedruntime.Algorithm{Snapshot: snap}, &schedruntime.Algorithm{Snapshot: snap}
	for _, w := range workloads {
		_, want := schedule(defaultFramework(t, snap), freshAlg, w)
		if _, got := schedule(fw, longAlg, w); got != want {
			t.Errorf("after the cycle, workload %s: long-lived framework %q, fresh one %q", w.Name, got, want)
		}
	}
}
