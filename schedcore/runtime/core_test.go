package runtime_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestFitErrorMessage(t *testing.T) {
	withReasons := func(code schedcore.Code, plugin string, reasons ...string) *schedcore.Status {
		return schedcore.NewStatus(code, reasons...).WithPlugin(plugin)
	}
	tests := []struct {
		name  string
		nodes int
		set   map[string]*schedcore.Status
		abs   *schedcore.Status
		pre   string
		post  string
		want  string
	}{
		{
			name:  "reasons are counted and sorted as strings",
			nodes: 5,
			set: map[string]*schedcore.Status{
				"a": withReasons(schedcore.Unschedulable, "NodeResourcesFit", "Insufficient cpu"),
				"b": withReasons(schedcore.Unschedulable, "NodeResourcesFit", "Insufficient cpu", "Insufficient memory"),
				"c": withReasons(schedcore.UnschedulableAndUnresolvable, "TaintToleration", "node(s) had untolerated taint(s)"),
				"d": withReasons(schedcore.UnschedulableAndUnresolvable, "TaintToleration", "node(s) had untolerated taint(s)"),
				"e": withReasons(schedcore.UnschedulableAndUnresolvable, "TaintToleration", "node(s) had untolerated taint(s)"),
			},
			want: "0/5 nodes are available: 1 Insufficient memory, 2 Insufficient cpu, 3 node(s) had untolerated taint(s).",
		},
		{
			name:  "nodes without an explicit status take the absent status",
			nodes: 4,
			set:   map[string]*schedcore.Status{"a": withReasons(schedcore.Unschedulable, "NodePorts", "node(s) didn't have free ports for the requested pod ports")},
			abs:   schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]"),
			want:  "0/4 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 3 node(s) didn't satisfy plugin(s) [NodeAffinity].",
		},
		{
			name:  "a PreFilter rejection replaces the histogram",
			nodes: 3,
			abs:   schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "x"),
			pre:   "node(s) didn't match pod topology spread constraints (missing required label)",
			want:  "0/3 nodes are available: node(s) didn't match pod topology spread constraints (missing required label).",
		},
		{
			name:  "the PostFilter message follows without a period",
			nodes: 1,
			set:   map[string]*schedcore.Status{"a": withReasons(schedcore.Unschedulable, "NodeResourcesFit", "Insufficient cpu")},
			post:  "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
			want:  "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n2s := schedcore.NewNodeToStatus()
			for k, v := range tt.set {
				n2s.Set(k, v)
			}
			if tt.abs != nil {
				n2s.SetAbsentNodesStatus(tt.abs)
			}
			fe := &schedcore.FitError{Pod: schedtest.MakePod("p").Obj(), NumAllNodes: tt.nodes, Diagnosis: schedcore.Diagnosis{NodeToStatus: n2s, PreFilterMsg: tt.pre, PostFilterMsg: tt.post}}
			if got := fe.Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	p := func(v int32) *int32 { return &v }
	tests := []struct {
		name    string
		profile *int32
		global  int32
		nodes   int32
		want    int32
	}{
		{"fewer than 100 nodes are all evaluated", nil, 0, 99, 99},
		{"adaptive at 1000 nodes is 42%", nil, 0, 1000, 420},
		{"adaptive at 5000 nodes is 10%", nil, 0, 5000, 500},
		{"adaptive floors at 5% for huge clusters", nil, 0, 15000, 750},
		{"never fewer than 100", nil, 10, 500, 100},
		{"the global percentage applies", nil, 100, 5000, 5000},
		{"the profile percentage wins", p(20), 100, 5000, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schedruntime.NumFeasibleNodesToFind(tt.profile, tt.global, tt.nodes); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func names(ps []configv1.Plugin) []string {
	var out []string
	for _, p := range ps {
		s := p.Name
		if p.Weight != nil {
			s += ":" + string(rune('0'+*p.Weight))
		}
		out = append(out, s)
	}
	return out
}

func TestMergePlugins(t *testing.T) {
	w := func(n string, x int32) configv1.Plugin { return configv1.Plugin{Name: n, Weight: &x} }
	def := func() *configv1.Plugins {
		return &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "A"}, w("B", 2), {Name: "C"}}}}
	}
	tests := []struct {
		name   string
		custom *configv1.Plugins
		want   []string
	}{
		{"no custom plugins keeps the defaults", nil, []string{"A", "B:2", "C"}},
		{"a disabled default is dropped", &configv1.Plugins{MultiPoint: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "B"}}}}, []string{"A", "C"}},
		{"star disables every default", &configv1.Plugins{MultiPoint: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}, Enabled: []configv1.Plugin{{Name: "D"}}}}, []string{"D"}},
		{"re-listing a default replaces it in place", &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{w("B", 5), {Name: "D"}}}}, []string{"A", "B:5", "C", "D"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := schedcore.MergePlugins(def(), tt.custom)
			if d := cmp.Diff(tt.want, names(got.MultiPoint.Enabled)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestValidateConfig(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		cfg  configv1.KubeSchedulerConfiguration
		want string
	}{
		{"defaults are valid", configv1.KubeSchedulerConfiguration{}, ""},
		{"parallelism must be positive", configv1.KubeSchedulerConfiguration{Parallelism: i32(0)}, "parallelism: Invalid value: 0"},
		{"percentage is bounded", configv1.KubeSchedulerConfiguration{PercentageOfNodesToScore: i32(101)}, "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"},
		{"scheduler names are unique", configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: s("a")}, {SchedulerName: s("a")}}}, `profiles[1].schedulerName: Duplicate value: "a"`},
		{"weights are not negative", configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: s("a"), Plugins: &configv1.Plugins{Score: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "X", Weight: i32(-1)}}}}}}}, "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := schedcore.ValidateConfig(&tt.cfg)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCacheSnapshotIsIncremental(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	c.AddNode(schedtest.MakeNode("a").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
	c.AddNode(schedtest.MakeNode("b").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
	snap := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	a0, _ := snap.Get("a")
	b0, _ := snap.Get("b")
	// The snapshot's NodeInfos are updated in place (as kube's): keep the
	// generation a0 had.
	gen0 := a0.Generation

	pod := schedtest.MakePod("p").UID("p").Req("cpu", "1", "memory", "1Gi").Node("a").Obj()
	if err := c.AssumePod(pod); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(snap)
	a1, _ := snap.Get("a")
	b1, _ := snap.Get("b")
	if a1.Requested.MilliCPU != 1000 || a1.Requested.Memory != 1<<30 || len(a1.Pods) != 1 {
		t.Errorf("node a after assume: %v", a1)
	}
	if a1.Generation == gen0 {
		t.Errorf("node a's generation did not change")
	}
	if b1 != b0 || b1.Generation != b0.Generation {
		t.Errorf("node b was copied although unchanged")
	}
	c.ForgetPod(pod)
	c.UpdateSnapshot(snap)
	a2, _ := snap.Get("a")
	if a2.Requested.MilliCPU != 0 || len(a2.Pods) != 0 {
		t.Errorf("node a after forget: %v", a2)
	}
}

// RemoveNode finds the node's zone from the stored node, not from the
// caller's copy: a copy with another zone label must still remove it, so
// that adding it again lists it once.
func TestCacheRemoveNodeWithARelabelledCopy(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	mk := func(name, zone string) *v1.Node {
		return schedtest.MakeNode(name).Label(v1.LabelTopologyZone, zone).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()
	}
	c.AddNode(mk("a", "z1"))
	c.AddNode(mk("b", "z2"))
	snap := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	c.RemoveNode(mk("a", "z2"))
	c.UpdateSnapshot(snap)
	c.AddNode(mk("a", "z3"))
	c.UpdateSnapshot(snap)
	var got []string
	for _, ni := range snap.List() {
		got = append(got, ni.Name())
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Errorf("snapshot nodes (-want +got):\n%s", diff)
	}
}

// A snapshot kept up to date across random cache changes (the in-place
// path when no node is added or removed, the rebuild otherwise) lists the
// same nodes, in the same order, with the same contents and affinity lists,
// as a snapshot built afresh from the cache.
func TestCacheIncrementalSnapshotEqualsAFreshOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	// imgRng picks further images and the image columns asked for, apart
	// from rng so that the cluster's changes stay what they were.
	imgRng := rand.New(rand.NewPCG(3, 5))
	imgNames := []string{"img", "img-0", "img-1", "img-2"}
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	mkNode := func(i int, taint bool) *v1.Node {
		n := schedtest.MakeNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "8", "memory", "16Gi", "pods", "110")
		n = n.Label(v1.LabelTopologyZone, fmt.Sprintf("z%d", (i+rng.IntN(4)/3)%3)) // sometimes moves
		if r := rng.IntN(4); r > 0 {
			n = n.Label("rack", fmt.Sprintf("r%d", r))
		}
		if taint {
			n = n.Taint("k", "v", v1.TaintEffectNoSchedule)
		}
		if rng.IntN(3) == 0 { // images come and go (NodesWithImages)
			n = n.Image("img", 1000)
		}
		for _, name := range imgNames[1:] {
			if imgRng.IntN(3) == 0 {
				n = n.Image(name, int64(2000+imgRng.IntN(2)))
			}
		}
		return n.Obj()
	}
	live := map[int]bool{}
	var pods []*v1.Pod
	inc := schedcore.NewEmptySnapshot()
	// After a node moves zone the list keeps its order until a node is
	// added or removed (kube's cache), so until then only the contents are
	// compared with a fresh snapshot, not the order.
	zoneMoved := false
	zoneOf := map[int]string{}
	for step := 0; step < 2000; step++ {
		switch op := rng.IntN(10); {
		case op == 0: // add or re-add a node
			i := rng.IntN(12)
			n := mkNode(i, rng.IntN(2) == 0)
			if live[i] && zoneOf[i] != n.Labels[v1.LabelTopologyZone] {
				zoneMoved = true
			} else if !live[i] {
				zoneMoved = false // a node added: the list is rebuilt
			}
			c.AddNode(n)
			live[i], zoneOf[i] = true, n.Labels[v1.LabelTopologyZone]
		case op == 1 && len(live) > 0: // remove a node (its pods stay)
			i := rng.IntN(12)
			if live[i] {
				c.RemoveNode(mkNode(i, false))
				delete(live, i)
				zoneMoved = false
			}
		case op == 2: // update a node (new taints, another zone)
			i := rng.IntN(12)
			if live[i] {
				n := mkNode(i, rng.IntN(2) == 0)
				if zoneOf[i] != n.Labels[v1.LabelTopologyZone] {
					zoneMoved = true
				}
				c.UpdateNode(nil, n)
				zoneOf[i] = n.Labels[v1.LabelTopologyZone]
			}
		case op < 7 && len(live) > 0: // add a pod, with affinity or not
			var node int
			for i := range live {
				node = i
				break
			}
			w := schedtest.MakePod(fmt.Sprintf("p%d", step)).UID(fmt.Sprintf("p%d", step)).Req("cpu", "100m").Node(fmt.Sprintf("n%d", node))
			switch rng.IntN(3) {
			case 0:
				w = w.PodAffinity(v1.LabelTopologyZone, map[string]string{"app": "a"})
			case 1:
				w = w.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "b"})
			}
			p := w.Obj()
			if err := c.AddPod(p); err == nil {
				pods = append(pods, p)
			}
		case len(pods) > 0: // remove a pod
			k := rng.IntN(len(pods))
			c.RemovePod(pods[k])
			pods = append(pods[:k], pods[k+1:]...)
		}
		c.UpdateSnapshot(inc)
		if rng.IntN(2) == 0 {
			schedcore.NewDomainCounts(inc, "rack") // a label column kept across changes
		}
		fresh := schedcore.NewEmptySnapshot()
		c.UpdateSnapshot(fresh)
		want, got := describeSnapshot(fresh), describeSnapshot(inc)
		if zoneMoved {
			want, got = sortedNodeLines(want), sortedNodeLines(got)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: incremental snapshot differs from a fresh one (-fresh +incremental):\n%s", step, diff)
		}
	}
}

// sortedNodeLines drops the list positions from describeSnapshot's lines
// and sorts them: the contents without the order.
func sortedNodeLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(f[2], "idx=") {
			l = strings.Join(append([]string{f[1]}, f[3:]...), " ")
		}
		out[i] = l
	}
	sort.Strings(out)
	return out
}

// describeSnapshot lists a snapshot's nodes in order with what the plugins
// read of them (a label through the label column), and the names in its
// affinity lists.
func describeSnapshot(s *schedcore.Snapshot) []string {
	var out []string
	racks := schedcore.NewDomainCounts(s, "rack")
	for i, ni := range s.List() {
		rack := "<none>"
		if dom, ok := racks.NodeDomain(0, ni); ok {
			rack = racks.Value(0, dom)
			if back := racks.ValueDomain(0, rack); back != dom {
				rack += fmt.Sprintf(" (ValueDomain says %d)", back)
			}
		}
		if want, ok := ni.Node().Labels["rack"]; ok != (rack != "<none>") || ok && want != rack {
			rack += " (node says " + want + ")"
		}
		var pods []string
		for _, p := range ni.Pods {
			pods = append(pods, p.Pod.Name)
		}
		sort.Strings(pods)
		got, err := s.Get(ni.Name())
		out = append(out, fmt.Sprintf("%d %s idx=%d rack=%s taints=%d cpu=%d pods=%v aff=%d anti=%d get=%v,%v",
			i, ni.Name(), ni.ListIndex(), rack, len(ni.Taints()), ni.Requested.MilliCPU, pods, len(ni.PodsWithAffinity), len(ni.PodsWithRequiredAntiAffinity), got == ni, err))
	}
	// The lists must hold the snapshot's current copies, not earlier ones
	// of the same nodes.
	for _, ni := range s.HavePodsWithAffinityList() {
		got, _ := s.Get(ni.Name())
		out = append(out, fmt.Sprintf("affinity %s current=%v", ni.Name(), got == ni))
	}
	for _, ni := range s.HavePodsWithRequiredAntiAffinityList() {
		got, _ := s.Get(ni.Name())
		out = append(out, fmt.Sprintf("anti-affinity %s current=%v", ni.Name(), got == ni))
	}
	out = append(out, fmt.Sprintf("nodes with images: %d", s.NodesWithImages()))
	return out
}

// As in kube-scheduler's cache, a node that moves zone keeps its place in
// the snapshot list until a node is added or removed; then the list is
// rebuilt from the zone tree, interleaving the zones.
func TestCacheZoneChangeKeepsTheListOrderUntilANodeIsAdded(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	zn := func(name, zone string) *v1.Node {
		return schedtest.MakeNode(name).Label(v1.LabelTopologyZone, zone).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()
	}
	names := func(s *schedcore.Snapshot) []string {
		var out []string
		for _, ni := range s.List() {
			out = append(out, ni.Name())
		}
		return out
	}
	c.AddNode(zn("a", "z1"))
	c.AddNode(zn("b", "z2"))
	c.AddNode(zn("c", "z1"))
	snap := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	if diff := cmp.Diff([]string{"a", "b", "c"}, names(snap)); diff != "" {
		t.Fatalf("initial order (-want +got):\n%s", diff)
	}
	c.UpdateNode(nil, zn("a", "z2"))
	c.UpdateSnapshot(snap)
	if diff := cmp.Diff([]string{"a", "b", "c"}, names(snap)); diff != "" {
		t.Errorf("order after a moved to z2 (-want +got):\n%s", diff)
	}
	if a, _ := snap.Get("a"); a.Node().Labels[v1.LabelTopologyZone] != "z2" {
		t.Errorf("node a in the snapshot is in zone %q, want z2", a.Node().Labels[v1.LabelTopologyZone])
	}
	// The tree: z1 [c], z2 [b a]; d joins z1.
	c.AddNode(zn("d", "z1"))
	c.UpdateSnapshot(snap)
	if diff := cmp.Diff([]string{"c", "b", "d", "a"}, names(snap)); diff != "" {
		t.Errorf("order after d was added (-want +got):\n%s", diff)
	}
}
