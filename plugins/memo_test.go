package plugins_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/plugins/imagelocality"
	"github.com/kubectl-sched/kubectl-sched/plugins/interpodaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodeaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/podtopologyspread"
	"github.com/kubectl-sched/kubectl-sched/plugins/tainttoleration"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The plugins that remember per-node results across cycles (NodeMemo,
// VerdictMemo, MatchCounter and InterPodAffinity's term index) must decide
// exactly as a fresh instance that remembers nothing, whatever happened to
// the cluster in between: pods added and removed, nodes relabelled, added
// and removed. The plugins that update their PreFilter state with AddPod
// and RemovePod (their schedcore.DomainCounts, on clones) must also decide
// as a fresh instance counting the changed cluster (checkPodUpdates).
func TestMemoizedPluginsMatchFreshInstances(t *testing.T) {
	factories := []struct {
		name string
		new  func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error)
	}{
		{"InterPodAffinity", interpodaffinity.New},
		{"PodTopologySpread", podtopologyspread.New},
		{"ImageLocality", imagelocality.New},
		{"NodeAffinity", nodeaffinity.New},
		{"TaintToleration", tainttoleration.New},
	}
	for _, f := range factories {
		t.Run(f.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(7))
			cache := schedcore.NewCache(schedcore.DefaultFeatures)
			snap := schedcore.NewEmptySnapshot()
			for i := 0; i < 12; i++ {
				cache.AddNode(randomNode(rng, i))
			}
			h := schedcore.NewHandle(snap, 2)
			ctx := context.Background()
			long, err := f.new(ctx, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			cl := &randomCluster{rng: rng, cache: cache, nodes: 12}
			for step := 0; step < 300; step++ {
				cl.change(randomPod(rng, fmt.Sprintf("p%d", step)))
				placed := cl.placed
				cache.UpdateSnapshot(snap)
				pod := randomPod(rng, "incoming")
				fresh, err := f.new(ctx, nil, h)
				if err != nil {
					t.Fatal(err)
				}
				want := runPlugin(ctx, fresh, pod, snap)
				got := runPlugin(ctx, long, pod, snap)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("step %d: remembering instance differs from a fresh one (-fresh +remembering):\n%s", step, diff)
				}
				if _, ok := long.(schedcore.PreFilterExtensions); ok {
					for range 4 {
						checkPodUpdates(t, step, long, f.new, cache, snap, pod, placed, rng)
					}
				}
			}
		})
	}
}

// The framework remembers the raw scores of NodeLocalScorers
// (NodeResourcesFit, NodeResourcesBalancedAllocation, TaintToleration,
// ImageLocality, NodeAffinity) per ScoreKey, and the verdicts of
// NodeLocalFilters (NodeResourcesFit, TaintToleration, NodeAffinity,
// NodeUnschedulable: passes and shared rejections) per FilterKey, across cycles,
// and calls no Score where a UniformScorer (ImageLocality without images
// on any node, DynamicResources without claims) says every node scores
// the same: a long-lived default-profile framework must filter and score
// every node as a fresh one does in a cycle with every shortcut off,
// whatever happened to the cluster in between.
func TestRememberedScoresMatchFreshFramework(t *testing.T) {
	// imageless: the nodes rarely hold images, so that ImageLocality's
	// uniform score (no node with an image) comes and goes.
	for _, imageless := range []bool{false, true} {
		t.Run(fmt.Sprint("imageless=", imageless), func(t *testing.T) { checkRememberedScores(t, imageless, 6) })
	}
	// More workloads than a memo keeps keys (64): tables are evicted, and
	// their entries serve the next keys' tables (VerdictMemo.PinnedView).
	t.Run("workloads=100", func(t *testing.T) { checkRememberedScores(t, false, 100) })
}

// explainVerdicts lists every node's verdicts in an explanation of pod:
// each failing filter with its status and shortfall.
func explainVerdicts(ctx context.Context, fw *schedruntime.Framework, snap *schedcore.Snapshot, pod *v1.Pod) []string {
	ex := schedruntime.Explain(ctx, fw, snap, pod, nil)
	var out []string
	for _, ne := range ex.Nodes {
		line := fmt.Sprint(ne.Name, " feasible ", ne.Feasible)
		for _, v := range ne.Failures {
			line += fmt.Sprint(" | ", v.Plugin, " ", v.Status.Code(), " ", v.Status.Reasons(), " ", v.Shortfall)
		}
		out = append(out, line)
	}
	return out
}

// scheduleOutcome is what a driver reads of a cycle scheduling pod: the
// chosen node, the feasible and evaluated nodes, and, when nothing fits,
// the FitError's message and every node's status.
func scheduleOutcome(ctx context.Context, fw *schedruntime.Framework, snap *schedcore.Snapshot, pod *v1.Pod, diagnoseFailuresOnly bool) []string {
	state := schedcore.NewCycleState()
	alg := &schedruntime.Algorithm{Snapshot: snap}
	res, diag, err := alg.SchedulePodWith(ctx, fw, state, pod, schedruntime.CycleOptions{DiagnoseFailuresOnly: diagnoseFailuresOnly})
	out := []string{fmt.Sprint("host ", res.SuggestedHost, " feasible ", res.FeasibleNodes, " evaluated ", res.EvaluatedNodes)}
	if err != nil {
		out = append(out, err.Error())
		diag.NodeToStatus.ForEachExplicitNode(func(node string, s *schedcore.Status) {
			out = append(out, fmt.Sprint(node, " ", s.Code(), " ", s.Plugin(), " ", s.Reasons()))
		})
	}
	return out
}

func checkRememberedScores(t *testing.T, imageless bool, numWorkloads int) {
	rng := rand.New(rand.NewSource(11))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	cl := &randomCluster{rng: rng, cache: cache, nodes: 12, imageless: imageless}
	for i := 0; i < 12; i++ {
		cache.AddNode(cl.node(i))
	}
	ctx := context.Background()
	newFramework := func() *schedruntime.Framework {
		name := v1.DefaultSchedulerName
		prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins.DefaultPlugins()}
		fw, err := schedruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), prof, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fw
	}
	cache.UpdateSnapshot(snap)
	long := newFramework()
	// score runs a cycle's filters and scores on every node; the
	// reference cycle times every plugin, which turns off every shortcut
	// (memos, uniform scores): each plugin runs on each node.
	score := func(fw *schedruntime.Framework, pod *v1.Pod, reference bool) []string {
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
		return out
	}
	// Few workloads, as in a real cluster: consecutive cycles share keys
	// (numWorkloads 6), or many, whose keys the memos cannot all keep.
	workloads := make([]*v1.Pod, numWorkloads)
	for i := range workloads {
		workloads[i] = randomPod(rng, fmt.Sprintf("w%d", i))
		if numWorkloads > 64 {
			// A request of its own: as many resource scorers' keys as
			// workloads.
			workloads[i].Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(fmt.Sprintf("%dm", 100+i))
		}
	}
	withoutImages := 0
	for step := 0; step < 300; step++ {
		p := workloads[rng.Intn(len(workloads))].DeepCopy()
		p.Name, p.UID = fmt.Sprintf("p%d", step), types.UID(fmt.Sprint("uid-", step))
		cl.change(p)
		cache.UpdateSnapshot(snap)
		if snap.NodesWithImages() == 0 {
			withoutImages++
		}
		pod := workloads[rng.Intn(len(workloads))]
		want := score(newFramework(), pod, true)
		if diff := cmp.Diff(want, score(long, pod, false)); diff != "" {
			t.Fatalf("step %d: long-lived framework scores differ from a fresh one's (-fresh +long-lived):\n%s", step, diff)
		}
		// A scheduler cycle, which counts the rejected nodes when some
		// node fits (CycleOptions.DiagnoseFailuresOnly), decides as a
		// recording cycle of a fresh framework.
		if diff := cmp.Diff(scheduleOutcome(ctx, newFramework(), snap, pod, false), scheduleOutcome(ctx, long, snap, pod, true)); diff != "" {
			t.Fatalf("step %d: long-lived framework's scheduler cycle differs from a fresh one's (-fresh +long-lived):\n%s", step, diff)
		}
		// An explanation's diagnosis (every failing filter on every
		// node) reads and writes the same memos.
		if diff := cmp.Diff(explainVerdicts(ctx, newFramework(), snap, pod), explainVerdicts(ctx, long, snap, pod)); diff != "" {
			t.Fatalf("step %d: long-lived framework's explanation differs from a fresh one's (-fresh +long-lived):\n%s", step, diff)
		}
	}
	if imageless && (withoutImages < 30 || withoutImages > 270) {
		t.Errorf("%d of 300 steps had no node with images: too few changes between uniform and per-node image scores", withoutImages)
	}
}

// randomCluster makes random changes to a cache of nodes named node-0,
// node-1, ...: pods placed and removed, nodes relabelled, added and removed.
type randomCluster struct {
	rng    *rand.Rand
	cache  *schedcore.Cache
	placed []*v1.Pod
	nodes  int
	// imageless drops the images of most nodes it adds.
	imageless bool
	// cordoned cordons (spec.unschedulable) a tenth of the nodes it adds.
	cordoned bool
	// labelled gives every node it adds a zone and a rack.
	labelled bool
}

// node is randomNode(i), without images most of the time when the
// cluster is imageless.
func (c *randomCluster) node(i int) *v1.Node {
	n := randomNode(c.rng, i)
	if c.imageless && c.rng.Intn(20) > 0 {
		n.Status.Images = nil
	}
	if c.cordoned && c.rng.Intn(10) == 0 {
		n.Spec.Unschedulable = true
	}
	if c.labelled {
		if _, ok := n.Labels[v1.LabelTopologyZone]; !ok {
			n.Labels[v1.LabelTopologyZone] = zones[c.rng.Intn(len(zones))]
		}
		if _, ok := n.Labels["rack"]; !ok {
			n.Labels["rack"] = fmt.Sprintf("r%d", c.rng.Intn(4))
		}
	}
	return n
}

// change makes one change; when it places a pod, that pod is p, on a
// random node.
func (c *randomCluster) change(p *v1.Pod) {
	rng := c.rng
	switch r := rng.Intn(10); {
	case r < 6 || len(c.placed) == 0:
		p.Spec.NodeName = fmt.Sprintf("node-%d", rng.Intn(c.nodes))
		if err := c.cache.AddPod(p); err == nil {
			c.placed = append(c.placed, p)
		}
	case r < 8:
		i := rng.Intn(len(c.placed))
		c.cache.RemovePod(c.placed[i])
		c.placed = append(c.placed[:i], c.placed[i+1:]...)
	case r < 9:
		c.cache.AddNode(c.node(rng.Intn(c.nodes)))
	default:
		if rng.Intn(2) == 0 {
			c.cache.AddNode(c.node(c.nodes))
			c.nodes++
		} else {
			c.cache.RemoveNode(randomNode(rng, rng.Intn(c.nodes)))
		}
	}
}

// runPlugin runs the plugin's PreFilter, Filter, PreScore, Score and
// NormalizeScore over every node and reports what each said.
func runPlugin(ctx context.Context, p schedcore.Plugin, pod *v1.Pod, snap *schedcore.Snapshot) []string {
	var out []string
	nodes := snap.List()
	state := schedcore.NewCycleState()
	feasible := nodes
	if pf, ok := p.(schedcore.PreFilterPlugin); ok {
		_, s := pf.PreFilter(ctx, state, pod, nodes)
		out = append(out, "prefilter "+s.Code().String()+" "+fmt.Sprint(s.Reasons()))
		if !s.IsSuccess() {
			return out
		}
		feasible = nil
		for _, ni := range nodes {
			s := p.(schedcore.FilterPlugin).Filter(ctx, state, pod, ni)
			out = append(out, ni.Name()+" filter "+s.Code().String()+" "+fmt.Sprint(s.Reasons()))
			if s.IsSuccess() {
				feasible = append(feasible, ni)
			}
		}
	}
	if ps, ok := p.(schedcore.PreScorePlugin); ok {
		s := ps.PreScore(ctx, state, pod, feasible)
		out = append(out, "prescore "+s.Code().String())
		if !s.IsSuccess() {
			return out
		}
	}
	sp := p.(schedcore.ScorePlugin)
	scores := make(schedcore.NodeScoreList, len(feasible))
	for i, ni := range feasible {
		sc, s := sp.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			out = append(out, ni.Name()+" score error "+s.AsError().Error())
		}
		scores[i] = schedcore.NodeScore{Name: ni.Name(), Score: sc}
	}
	if n, ok := p.(schedcore.NormalizeScorePlugin); ok {
		_ = plugintest.Normalize(ctx, n, state, pod, scores)
	}
	for _, s := range scores {
		out = append(out, fmt.Sprintf("%s score %d", s.Name, s.Score))
	}
	return out
}

var (
	apps   = []string{"a", "b", "c"}
	zones  = []string{"z1", "z2", "z3"}
	images = []string{"img/one:v1", "img/two", "img/three:v3"}
)

func randomNode(rng *rand.Rand, i int) *v1.Node {
	n := st.MakeNode(fmt.Sprintf("node-%d", i)).Capacity("cpu", "8", "memory", "16Gi", "pods", "110")
	if rng.Intn(5) > 0 {
		n.Label(v1.LabelTopologyZone, zones[rng.Intn(len(zones))])
	}
	if rng.Intn(4) > 0 {
		n.Label("rack", fmt.Sprintf("r%d", rng.Intn(4)))
	}
	for _, img := range images {
		if rng.Intn(2) == 0 {
			n.Image(img, int64(100+rng.Intn(900))*1024*1024)
		}
	}
	switch rng.Intn(6) {
	case 0:
		n.Taint("dedicated", apps[rng.Intn(len(apps))], v1.TaintEffectNoSchedule)
	case 1:
		n.Taint("spot", "", v1.TaintEffectPreferNoSchedule)
	}
	return n.Obj()
}

func randomPod(rng *rand.Rand, name string) *v1.Pod {
	p := st.MakePod(name).Namespace([]string{"default", "team"}[rng.Intn(2)]).Label("app", apps[rng.Intn(len(apps))])
	// Requests drawn from few values, so that pods share the resource
	// scorers' memo keys.
	p.Req("cpu", []string{"100m", "500m", "2"}[rng.Intn(3)])
	if rng.Intn(2) == 0 {
		p.Req("memory", []string{"256Mi", "3Gi"}[rng.Intn(2)])
	}
	p.Image(images[rng.Intn(len(images))])
	sel := func() map[string]string { return map[string]string{"app": apps[rng.Intn(len(apps))]} }
	key := func() string { return []string{v1.LabelHostname, v1.LabelTopologyZone, "rack"}[rng.Intn(3)] }
	switch rng.Intn(8) {
	case 0:
		p.PreferredPodAffinity(int32(1+rng.Intn(100)), key(), sel())
	case 1:
		p.PreferredPodAntiAffinity(int32(1+rng.Intn(100)), key(), sel())
	case 2:
		p.PodAffinity(key(), sel())
	case 3:
		p.PodAntiAffinity(key(), sel())
	case 4:
		p.SpreadConstraint(1, key(), v1.ScheduleAnyway, sel(), nil)
	case 5:
		p.SpreadConstraint(int32(1+rng.Intn(2)), key(), v1.DoNotSchedule, sel(), nil)
	case 6:
		p.PreferredPodAffinity(int32(1+rng.Intn(100)), key(), sel()).PreferredPodAntiAffinity(int32(1+rng.Intn(100)), key(), sel())
	}
	// Node constraints and tolerations, drawn from few values so that
	// pods share them (and the memo keys).
	if rng.Intn(4) == 0 {
		p.NodeSelector("rack", fmt.Sprintf("r%d", rng.Intn(4)))
	}
	if rng.Intn(4) == 0 {
		p.NodeAffinityIn(v1.LabelTopologyZone, zones[rng.Intn(len(zones))], zones[rng.Intn(len(zones))])
	}
	if rng.Intn(3) == 0 {
		p.PreferredNodeAffinityIn(int32(1+rng.Intn(3)), "rack", fmt.Sprintf("r%d", rng.Intn(4)))
	}
	switch rng.Intn(4) {
	case 0:
		p.Toleration("dedicated", v1.TolerationOpEqual, apps[rng.Intn(len(apps))], v1.TaintEffectNoSchedule)
	case 1:
		p.Toleration("spot", v1.TolerationOpExists, "", "")
	}
	if rng.Intn(5) == 0 {
		// Host ports drawn from few values, for NodePorts' rejections.
		p.HostPort(int32(8080+rng.Intn(2)), []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP}[rng.Intn(2)], []string{"", "10.0.0.1"}[rng.Intn(2)])
	}
	pod := p.Obj()
	if rng.Intn(4) == 0 {
		// A required term with the other operators, ORed with any
		// NodeAffinityIn term (matched through the label columns).
		ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist}
		r := v1.NodeSelectorRequirement{Key: "rack", Operator: ops[rng.Intn(len(ops))]}
		if r.Operator == v1.NodeSelectorOpNotIn {
			r.Values = []string{fmt.Sprintf("r%d", rng.Intn(4))}
		}
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &v1.Affinity{}
		}
		if pod.Spec.Affinity.NodeAffinity == nil {
			pod.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
		}
		na := pod.Spec.Affinity.NodeAffinity
		if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
		}
		na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{r}})
	}
	for i := range pod.Spec.TopologySpreadConstraints {
		if rng.Intn(2) == 0 {
			honor := v1.NodeInclusionPolicyHonor
			pod.Spec.TopologySpreadConstraints[i].NodeTaintsPolicy = &honor
		}
	}
	return pod
}

// checkPodUpdates checks AddPod and RemovePod as the framework calls them
// for nominated pods and preemption victims (on a clone of the cycle's
// state, with the node's copy changed): Filter must then decide on every
// node as a fresh instance whose PreFilter counted the changed cluster, and
// the original state must not see the clone's change.
func checkPodUpdates(t *testing.T, step int, p schedcore.Plugin, newPlugin func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error),
	cache *schedcore.Cache, snap *schedcore.Snapshot, pod *v1.Pod, placed []*v1.Pod, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	state := schedcore.NewCycleState()
	if _, s := p.(schedcore.PreFilterPlugin).PreFilter(ctx, state, pod, snap.List()); !s.IsSuccess() {
		return // Skip: the framework calls neither AddPod nor RemovePod
	}
	before := filterAll(p, state, pod, snap.List())

	// A placed pod removed (one whose node is still there), or a new pod
	// added.
	var change *v1.Pod
	var ni *schedcore.NodeInfo
	if len(placed) > 0 && rng.Intn(2) == 0 {
		change = placed[rng.Intn(len(placed))]
		ni, _ = snap.Get(change.Spec.NodeName)
	}
	remove := ni != nil
	if !remove {
		ni = snap.List()[rng.Intn(snap.NumNodes())]
		change = randomPod(rng, fmt.Sprintf("added-%d", step))
		if rng.Intn(2) == 0 { // a pod of the incoming pod's workload
			change.Namespace, change.Labels = pod.Namespace, pod.Labels
		}
		change.Spec.NodeName = ni.Name()
	}
	changed, clone, pi := ni.Clone(), state.Clone(), schedcore.NewPodInfo(change)
	ext := p.(schedcore.PreFilterExtensions)
	var s *schedcore.Status
	if remove {
		if err := changed.RemovePod(change, schedcore.DefaultFeatures); err != nil {
			t.Fatal(err)
		}
		s = ext.RemovePod(ctx, clone, pod, pi, changed)
	} else {
		changed.AddPodInfo(pi, schedcore.DefaultFeatures)
		s = ext.AddPod(ctx, clone, pod, pi, changed)
	}
	if !s.IsSuccess() {
		t.Fatalf("step %d: AddPod/RemovePod: %v", step, s.AsError())
	}
	nodes := append([]*schedcore.NodeInfo(nil), snap.List()...)
	for i := range nodes {
		if nodes[i] == ni {
			nodes[i] = changed
		}
	}
	got := filterAll(p, clone, pod, nodes)

	// The changed cluster, counted afresh.
	apply := func(add bool) {
		if add {
			if err := cache.AddPod(change); err != nil {
				t.Fatal(err)
			}
		} else {
			cache.RemovePod(change)
		}
	}
	apply(!remove)
	defer apply(remove)
	changedSnap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(changedSnap)
	fresh, err := newPlugin(ctx, nil, schedcore.NewHandle(changedSnap, 2))
	if err != nil {
		t.Fatal(err)
	}
	freshState := schedcore.NewCycleState()
	var want []string
	if _, s := fresh.(schedcore.PreFilterPlugin).PreFilter(ctx, freshState, pod, changedSnap.List()); s.IsSkip() {
		for _, ni := range changedSnap.List() {
			want = append(want, ni.Name()+" filter Success []")
		}
		sort.Strings(want)
	} else {
		want = filterAll(fresh, freshState, pod, changedSnap.List())
	}
	op := map[bool]string{true: "RemovePod", false: "AddPod"}[remove]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("step %d: Filter after %s(%s on %s) differs from a fresh count (-fresh +updated):\n%s", step, op, change.Name, ni.Name(), diff)
	}
	if diff := cmp.Diff(before, filterAll(p, state, pod, snap.List())); diff != "" {
		t.Fatalf("step %d: %s on a clone changed the original state (-before +after):\n%s", step, op, diff)
	}
}

// filterAll runs Filter on each node; the lines are sorted, as a snapshot
// built afresh lists the nodes in another order.
func filterAll(p schedcore.Plugin, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) []string {
	var out []string
	for _, ni := range nodes {
		s := p.(schedcore.FilterPlugin).Filter(context.Background(), state, pod, ni)
		out = append(out, ni.Name()+" filter "+s.Code().String()+" "+fmt.Sprint(s.Reasons()))
	}
	sort.Strings(out)
	return out
}
