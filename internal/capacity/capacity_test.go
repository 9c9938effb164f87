package capacity

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func defaults(t *testing.T, config string) (*configv1.KubeSchedulerConfiguration, schedcore.Registry) {
	t.Helper()
	path := ""
	if config != "" {
		path = filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, reg
}

func zoneNode(name, zone, cpu string) *v1.Node {
	return st.MakeNode(name).Label(v1.LabelTopologyZone, zone).Capacity("cpu", cpu, "memory", "32Gi", "pods", "110").Obj()
}

func count(t *testing.T, cl *snapshot.Cluster, specs []*Spec, o Options) *report.Capacity {
	t.Helper()
	if o.Config == nil {
		o.Config, o.Registry = defaults(t, "")
	}
	rep, err := Run(context.Background(), cl, specs, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func podSpec(p *v1.Pod) *Spec {
	p.Spec.SchedulerName = v1.DefaultSchedulerName
	return &Spec{Name: p.Namespace + "/" + p.Name, Kind: KindPod, Pod: p}
}

// A hard zone spread couples the nodes: the count must come from cycles.
// Were the node-local shortcut taken (PodTopologySpread claiming it is
// node-local, or the framework ignoring the claim), it would count what
// fits on each node: 9, not 3.
func TestCouplingConstraintsAreCountedCycleByCycle(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4"), zoneNode("a2", "a", "4"), zoneNode("b1", "b", "1")}}
	spread := st.MakePod("web").Namespace("default").Label("app", "web").Req("cpu", "1").
		SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, map[string]string{"app": "web"}, nil).Obj()
	anti := st.MakePod("one").Namespace("default").Label("app", "one").Req("cpu", "1").
		PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "one"}).Obj()
	tests := []struct {
		name  string
		pod   *v1.Pod
		count int
		nodes map[string]int
	}{
		{"a hard zone spread stops at skew 1", spread, 3, map[string]int{"a1": 1, "a2": 1, "b1": 1}},
		{"required anti-affinity to itself: one per node", anti, 3, map[string]int{"a1": 1, "a2": 1, "b1": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := count(t, cl, []*Spec{podSpec(tc.pod)}, Options{Nearest: -1})
			s := rep.Specs[0]
			if s.Method != report.MethodCycles || s.Count != tc.count {
				t.Errorf("method %s, count %d; want cycles, %d", s.Method, s.Count, tc.count)
			}
			if d := cmp.Diff(tc.nodes, s.Nodes); d != "" {
				t.Errorf("nodes (-want +got):\n%s", d)
			}
		})
	}
}

// The node-local count is the count of the cycles, node for node, on
// random clusters and random node-local pods (resources, host ports, node
// selectors, taints and tolerations, soft constraints).
func TestNodeLocalCountEqualsCycles(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 12; i++ {
		t.Run(fmt.Sprintf("cluster %d", i), func(t *testing.T) {
			cl := &snapshot.Cluster{}
			for n := 0; n < 8+rng.Intn(8); n++ {
				w := st.MakeNode(fmt.Sprintf("n%d", n)).Label(v1.LabelTopologyZone, fmt.Sprintf("z%d", rng.Intn(3))).
					Label("pool", []string{"a", "b"}[rng.Intn(2)]).
					Capacity("cpu", fmt.Sprint(2+rng.Intn(8)), "memory", fmt.Sprintf("%dGi", 4+rng.Intn(28)), "pods", fmt.Sprint(5+rng.Intn(20)))
				if rng.Intn(4) == 0 {
					w = w.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
				}
				cl.Nodes = append(cl.Nodes, w.Obj())
				for p := 0; p < rng.Intn(4); p++ {
					cl.Pods = append(cl.Pods, st.MakePod(fmt.Sprintf("e%d-%d", n, p)).Namespace("default").Label("app", "web").
						Req("cpu", fmt.Sprintf("%dm", 100+rng.Intn(900)), "memory", "1Gi").Node(cl.Nodes[n].Name).Obj())
				}
			}
			pod := st.MakePod("web").Namespace("default").Label("app", "web").
				Req("cpu", fmt.Sprintf("%dm", 200+rng.Intn(1500)), "memory", fmt.Sprintf("%dMi", 256+rng.Intn(2048)))
			if rng.Intn(2) == 0 {
				pod = pod.Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)
			}
			if rng.Intn(3) == 0 {
				pod = pod.NodeSelector("pool", "a")
			}
			if rng.Intn(3) == 0 {
				pod = pod.HostPort(8080, v1.ProtocolTCP, "")
			}
			if rng.Intn(2) == 0 {
				pod = pod.SpreadConstraint(1, v1.LabelTopologyZone, v1.ScheduleAnyway, map[string]string{"app": "web"}, nil)
			}
			spec := podSpec(pod.Obj())
			fast := count(t, cl, []*Spec{spec}, Options{Nearest: -1}).Specs[0]
			slow := count(t, cl, []*Spec{spec}, Options{Nearest: -1, Cycles: true}).Specs[0]
			if fast.Method != report.MethodNodeLocal || slow.Method != report.MethodCycles {
				t.Fatalf("methods %s and %s", fast.Method, slow.Method)
			}
			if d := cmp.Diff(slow, fast, cmpIgnoreMethod); d != "" {
				t.Errorf("node-local count differs from cycles (-cycles +node-local):\n%s", d)
			}
		})
	}
}

var cmpIgnoreMethod = cmp.Transformer("method", func(s report.CapacitySpec) report.CapacitySpec { s.Method = ""; return s })

func TestLimitsAndOrder(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4"), zoneNode("b1", "b", "4")}}
	web := podSpec(st.MakePod("web").Namespace("default").Req("cpu", "1").Obj())
	big := podSpec(st.MakePod("big").Namespace("default").Req("cpu", "2").Obj())
	withReplicas := func(s *Spec, n int) *Spec { c := *s; c.Replicas = n; return &c }
	tests := []struct {
		name     string
		specs    []*Spec
		max      int
		counts   []int
		limited  []string
		complete bool
	}{
		{"as many as fit", []*Spec{web}, 0, []int{8}, []string{report.LimitedByFit}, true},
		{"--max caps the count", []*Spec{web}, 3, []int{3}, []string{report.LimitedByMax}, true},
		{"--replicas that fit", []*Spec{withReplicas(web, 5)}, 0, []int{5}, []string{report.LimitedByReplicas}, true},
		{"--replicas that do not fit", []*Spec{withReplicas(web, 9)}, 0, []int{8}, []string{report.LimitedByFit}, false},
		{"specs are placed in order, each after the others", []*Spec{withReplicas(web, 5), big}, 0, []int{5, 1}, []string{report.LimitedByReplicas, report.LimitedByFit}, true},
		{"the second spec sees the first's copies", []*Spec{withReplicas(big, 3), web}, 0, []int{3, 2}, []string{report.LimitedByReplicas, report.LimitedByFit}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := count(t, cl, tc.specs, Options{Max: tc.max, Nearest: -1})
			var counts []int
			var limited []string
			for _, s := range rep.Specs {
				counts = append(counts, s.Count)
				limited = append(limited, s.LimitedBy)
			}
			if d := cmp.Diff(tc.counts, counts); d != "" {
				t.Errorf("counts (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.limited, limited); d != "" {
				t.Errorf("limited by (-want +got):\n%s", d)
			}
			if rep.Complete != tc.complete {
				t.Errorf("complete = %v, want %v", rep.Complete, tc.complete)
			}
		})
	}
}

// The copy that fits nowhere is explained: kube's message and the gaps of
// the nearest nodes.
func TestStoppedByIsExplained(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4"),
		st.MakeNode("t1").Capacity("cpu", "8", "memory", "8Gi", "pods", "10").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj()}}
	rep := count(t, cl, []*Spec{podSpec(st.MakePod("web").Namespace("default").Req("cpu", "1500m").Obj())}, Options{})
	s := rep.Specs[0]
	want := "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
	if s.Count != 2 || s.StoppedBy != want {
		t.Errorf("count %d, stopped by %q; want 2, %q", s.Count, s.StoppedBy, want)
	}
	if len(s.Nearest) == 0 || s.Nearest[0].Node != "a1" || len(s.Nearest[0].Gaps) == 0 || s.Nearest[0].Gaps[0] != "needs 500m cpu more (free 1 of 4)" {
		t.Errorf("nearest = %+v", s.Nearest)
	}
	if rep.Leftover.Free["cpu"] != 9000 || rep.Leftover.Allocatable["cpu"] != 12000 {
		t.Errorf("leftover = %+v", rep.Leftover)
	}
}

const coscheduling = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
      disabled: [{name: PrioritySort}]
`

// A gang counts in whole groups: each copy is a PodGroup of its own with
// its members, placed together or not at all.
func TestGangsCountInWholeGroups(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gang.yaml")
	gang := `apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: 3}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  parallelism: 3
  template:
    metadata: {labels: {scheduling.x-k8s.io/pod-group: train}}
    spec: {restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
`
	if err := os.WriteFile(path, []byte(gang), 0o600); err != nil {
		t.Fatal(err)
	}
	cl := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4"), zoneNode("b1", "b", "4")}}
	specs, err := LoadSpecs([]string{path}, nil, "", cl)
	if err != nil {
		t.Fatal(err)
	}
	cfg, reg := defaults(t, coscheduling)
	rep := count(t, cl, specs, Options{Config: cfg, Registry: reg, Nearest: -1})
	s := rep.Specs[0]
	// 8 cpu: two groups of three; the third group would need 3 of the 2 left.
	if s.Kind != KindPodGroup || s.Unit != "groups" || s.PodsPerGroup != 3 || s.Count != 2 || s.LimitedBy != report.LimitedByFit {
		t.Errorf("gang = %+v", s)
	}
	total := 0
	for _, n := range s.Nodes {
		total += n
	}
	if total != 6 {
		t.Errorf("pods placed = %d, want 6 (%v)", total, s.Nodes)
	}
}

// A DaemonSet gets one copy per node it targets, pinned there.
func TestDaemonSetOneCopyPerTargetedNode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ds.yaml")
	ds := `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: c, image: agent, resources: {requests: {cpu: "1"}}}]
`
	if err := os.WriteFile(path, []byte(ds), 0o600); err != nil {
		t.Fatal(err)
	}
	linux := func(n *v1.Node) *v1.Node { n.Labels[v1.LabelOSStable] = "linux"; return n }
	cl := &snapshot.Cluster{Nodes: []*v1.Node{
		linux(zoneNode("a1", "a", "4")),
		linux(zoneNode("full", "a", "500m")),
		zoneNode("windows", "a", "4"),
		linux(st.MakeNode("tainted").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()),
		linux(st.MakeNode("cordoned").Capacity("cpu", "4", "memory", "8Gi", "pods", "10").Unschedulable().Obj()),
	}}
	specs, err := LoadSpecs([]string{path}, nil, "", cl)
	if err != nil {
		t.Fatal(err)
	}
	s := count(t, cl, specs, Options{Nearest: -1}).Specs[0]
	// a1 takes one; full has no room; windows is not targeted; the taint
	// is not tolerated; a cordoned node gets its daemon pod (the
	// controller tolerates node.kubernetes.io/unschedulable).
	if d := cmp.Diff(map[string]int{"a1": 1, "cordoned": 1}, s.Nodes); d != "" {
		t.Errorf("nodes (-want +got):\n%s", d)
	}
	if s.Count != 2 || len(s.NotPlaced) != 1 || s.NotPlaced[0].Node != "full" || s.LimitedBy != report.LimitedByNodes {
		t.Errorf("spec = %+v", s)
	}
}

// --min-nodes: the node-local answer and the search agree, and each says
// how it got there.
func TestMinNodes(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4")}}
	tmpl := zoneNode("m6i", "b", "8")
	web := podSpec(st.MakePod("web").Namespace("default").Req("cpu", "1").Obj())
	web.Replicas = 30
	for _, cycles := range []bool{false, true} {
		t.Run(fmt.Sprintf("cycles=%v", cycles), func(t *testing.T) {
			rep := count(t, cl, []*Spec{web}, Options{Template: tmpl, MinNodes: true, Cycles: cycles, Nearest: -1})
			m := rep.MinNodes
			// 4 on a1, 8 per template node: 26 more need 4 nodes.
			if m == nil || !m.Reachable || m.NodesNeeded != 4 || rep.AddedNodes != 4 || rep.Specs[0].Count != 30 || !rep.Complete {
				t.Fatalf("min nodes = %+v, report %+v", m, rep)
			}
			wantMethod, wantMono := report.MethodNodeLocal, report.MonotoneProven
			if cycles {
				wantMethod, wantMono = "search", report.MonotoneAssumed
			}
			if m.Method != wantMethod || m.Monotonicity != wantMono {
				t.Errorf("method %s, monotonicity %s", m.Method, m.Monotonicity)
			}
		})
	}
	t.Run("a large --replicas: how many nodes, not where each copy lands", func(t *testing.T) {
		big := st.MakeNode("big").Capacity("cpu", "64", "memory", "256Gi", "pods", "1000").Obj()
		tiny := podSpec(st.MakePod("tiny").Namespace("default").Req("cpu", "10m").Obj())
		tiny.Replicas = landingBudget + 1
		rep := count(t, cl, []*Spec{tiny}, Options{Template: big, MinNodes: true, Nearest: -1})
		s := rep.Specs[0]
		// a1 holds 110 pods; each template node 1000.
		if rep.MinNodes.NodesNeeded != 5 || s.Count != landingBudget+1 || s.LimitedBy != report.LimitedByReplicas ||
			len(s.Nodes) != 0 || s.NodesNote == "" || rep.Leftover.Note == "" || !rep.Complete {
			t.Errorf("min nodes %+v, spec %+v, leftover note %q", rep.MinNodes, s, rep.Leftover.Note)
		}
	})
	t.Run("a hard zone spread with template nodes in one zone cannot be met", func(t *testing.T) {
		zones := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "2"), zoneNode("b1", "b", "2")}}
		spread := podSpec(st.MakePod("web").Namespace("default").Label("app", "web").Req("cpu", "1").
			SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, map[string]string{"app": "web"}, nil).Obj())
		spread.Replicas = 10
		rep := count(t, zones, []*Spec{spread}, Options{Template: zoneNode("m6i", "a", "8"), MinNodes: true, Nearest: -1})
		// Zone b holds two; zone a may hold one more than b whatever nodes it gets.
		if m := rep.MinNodes; m.Reachable || m.Method != "search" || m.Message == "" || rep.Specs[0].Count != 5 || rep.Complete {
			t.Errorf("min nodes %+v, count %d", m, rep.Specs[0].Count)
		}
	})
	t.Run("a template that holds no copy", func(t *testing.T) {
		small := zoneNode("tiny", "b", "500m")
		rep := count(t, cl, []*Spec{web}, Options{Template: small, MinNodes: true, Nearest: -1})
		if rep.MinNodes.Reachable || rep.Complete || rep.MinNodes.Message == "" {
			t.Errorf("min nodes = %+v", rep.MinNodes)
		}
	})
}

// A copy that comes with objects made for it (here the ResourceClaims of
// a claim template, made as a copy arrives) goes through the cycle one by
// one, and --min-nodes searches: a bare copy committed node by node would
// have none of them. Without the perCopyObjects check the node-local
// count and answer would be taken (nothing else here couples nodes).
func TestCopiesWithTheirOwnObjectsAreCountedCycleByCycle(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4"), zoneNode("b1", "b", "2")}}
	bare := st.MakePod("gpu").Namespace("default").Req("cpu", "1").Obj()
	withClaim := bare.DeepCopy()
	tmpl := "gpu-claim"
	withClaim.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmpl}}
	tmplNode := zoneNode("t", "c", "2")
	for _, tc := range []struct {
		name        string
		pod         *v1.Pod
		method      string
		minNodesVia string
	}{
		{"bare pod", bare, report.MethodNodeLocal, report.MethodNodeLocal},
		{"pod with a claim template", withClaim, report.MethodCycles, "search"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := count(t, cl, []*Spec{podSpec(tc.pod.DeepCopy())}, Options{Nearest: -1}).Specs[0].Method; got != tc.method {
				t.Errorf("method %s, want %s", got, tc.method)
			}
			s := podSpec(tc.pod.DeepCopy())
			s.Replicas = 10
			m := count(t, cl, []*Spec{s}, Options{Nearest: -1, MinNodes: true, Template: tmplNode}).MinNodes
			if m == nil || m.Method != tc.minNodesVia {
				t.Errorf("--min-nodes: %+v, want method %s", m, tc.minNodesVia)
			}
		})
	}
}

// --min-nodes's search does not take a plateau for a proof: more template
// nodes placing no more copies says nothing of many more (earlier specs
// spread over the new nodes and leave a later spec room only once there
// are enough of them). It keeps doubling up to one node per copy wanted,
// answers with the true minimum, and says "unreachable" only with a
// proof.
func TestMinNodesSearchNeedsAProofToGiveUp(t *testing.T) {
	shipped, err := snapshot.LoadPaths([]string{"../../examples/cluster.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m6i, err := LoadNodeTemplate("../../examples/m6i.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	shippedSpecs := func(replicas ...int) []*Spec {
		specs, err := LoadSpecs([]string{"../../examples/web.yaml", "../../examples/new-pod.yaml"}, nil, "default", shipped)
		if err != nil {
			t.Fatal(err)
		}
		for i := range specs {
			specs[i].Replicas = replicas[i]
		}
		return specs
	}
	small := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4"), zoneNode("b1", "b", "2")}}
	pod := func(name, cpu string, replicas int) *Spec {
		s := podSpec(st.MakePod(name).Namespace("default").Label("app", name).Req("cpu", cpu).Obj())
		s.Replicas = replicas
		return s
	}
	spread := pod("spread", "1", 10)
	spread.Pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
		WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
	for _, tc := range []struct {
		name     string
		cluster  *snapshot.Cluster
		specs    []*Spec
		template *v1.Node
		// want is the answer (Reachable), -1 for none.
		want        int
		unreachable bool
		message     string
		// lastTried is the last count evaluated when there is no answer.
		lastTried int
	}{{
		name:    "web spreads over 9 and 18 template nodes alike, the batch pod finds room at 41 (the issue's example)",
		cluster: shipped, specs: shippedSpecs(200, 10), template: m6i,
		want: 41,
	}, {
		name:    "a later spec that no template node holds and the cluster too little of: unreachable, proven",
		cluster: small, specs: []*Spec{pod("web", "1", 3), pod("big", "3", 2)}, template: zoneNode("m6i", "b", "2"),
		want: -1, unreachable: true, message: "a template node holds no copy of default/big (NodeResourcesFit: Insufficient cpu), and the cluster's nodes hold 1 of its 2 even without the other specs",
	}, {
		name:    "one node-local spec no template node holds: unreachable, proven",
		cluster: small, specs: []*Spec{pod("big", "3", 2)}, template: zoneNode("m6i", "b", "2"),
		want: -1, unreachable: true, message: "a template node holds no copy of default/big (NodeResourcesFit: Insufficient cpu), and the cluster's nodes hold 1 of its 2",
	}, {
		name:    "a hard zone spread with template nodes in one zone: not found up to one node per copy, not claimed unreachable",
		cluster: small, specs: []*Spec{spread}, template: zoneNode("m6i", "a", "8"),
		want: -1, message: "tried up to 10 template nodes (one per copy wanted): 10 placed 5, as 8 did; not proven unreachable", lastTried: 10,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rep := count(t, tc.cluster, tc.specs, Options{Template: tc.template, MinNodes: true, Nearest: -1})
			m := rep.MinNodes
			if tc.want >= 0 {
				if !m.Reachable || m.NodesNeeded != tc.want || m.Unreachable || !rep.Complete {
					t.Fatalf("min nodes %+v, want %d", m, tc.want)
				}
				// The minimum: one node fewer is not enough.
				fewer := count(t, tc.cluster, tc.specs, Options{Template: tc.template, AddNodes: tc.want - 1, Nearest: -1})
				if fewer.Complete {
					t.Errorf("%d template nodes are enough too", tc.want-1)
				}
				return
			}
			if m.Reachable || m.Unreachable != tc.unreachable || rep.Complete {
				t.Errorf("min nodes %+v: want unreachable=%v", m, tc.unreachable)
			}
			if m.Message != tc.message {
				t.Errorf("message\n%q, want\n%q", m.Message, tc.message)
			}
			if last := m.Evaluations[len(m.Evaluations)-1].Nodes; tc.lastTried > 0 && last != tc.lastTried {
				t.Errorf("last tried %d template nodes, want %d", last, tc.lastTried)
			}
		})
	}
}

// A copy stopped by its devices gets what explain gives: the nearest
// nodes, with DynamicResources' own gap per request and a line per device
// (the copy explained with claims of its own, as its cycle saw it); and
// the devices left over count per node and driver.
func TestDevicesInTheNearestNodesAndLeftOver(t *testing.T) {
	cl, err := snapshot.LoadPaths([]string{"../../examples/dra.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "trainer.yaml")
	if err := os.WriteFile(spec, []byte(`apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: main
    image: registry.example.com/trainer:v1
    resources:
      requests: {cpu: "4", memory: 16Gi}
      claims: [{name: gpu}]
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
`), 0o600); err != nil {
		t.Fatal(err)
	}
	const gpus = "gpu.example.com/devices"
	for _, tc := range []struct {
		name              string
		replicas          int
		count             int
		nearest           []string
		gpuNodeDetails    []string
		freeGPUs, perNode int64
	}{{
		name: "as many as fit: the third finds both GPUs taken", count: 2,
		nearest: []string{"cpu-node", "gpu-node"},
		gpuNodeDetails: []string{
			"gpu.example.com/gpu-node/gpu-0: allocated to ml/trainer-capacity-1",
			"gpu.example.com/gpu-node/gpu-1: allocated to ml/trainer-capacity-2",
		},
	}, {
		name: "one copy leaves one GPU", replicas: 1, count: 1, freeGPUs: 1, perNode: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := LoadSpecs([]string{spec}, nil, "default", cl)
			if err != nil {
				t.Fatal(err)
			}
			specs[0].Replicas = tc.replicas
			rep := count(t, cl, specs, Options{})
			s := rep.Specs[0]
			if s.Count != tc.count {
				t.Fatalf("count %d, want %d (%s)", s.Count, tc.count, s.StoppedBy)
			}
			var nearest []string
			for _, n := range s.Nearest {
				nearest = append(nearest, n.Node)
				if len(n.Gaps) != 1 || !strings.Contains(n.Gaps[0], "request gpu of claim ml/trainer-capacity-3-gpu-") {
					t.Errorf("%s: gaps %q, want DynamicResources' gap for the third copy's claim", n.Node, n.Gaps)
				}
				if n.Node == "gpu-node" {
					if d := cmp.Diff([][]string{tc.gpuNodeDetails}, n.Details); d != "" {
						t.Errorf("gpu-node's device lines (-want +got):\n%s", d)
					}
				}
			}
			if d := cmp.Diff(tc.nearest, nearest); d != "" {
				t.Errorf("nearest nodes (-want +got):\n%s", d)
			}
			l := rep.Leftover
			if l.Allocatable[gpus] != 2 || l.Free[gpus] != tc.freeGPUs || l.Nodes["gpu-node"][gpus] != tc.perNode {
				t.Errorf("left over: %d of %d GPUs, %d on gpu-node; want %d of 2, %d", l.Free[gpus], l.Allocatable[gpus], l.Nodes["gpu-node"][gpus], tc.freeGPUs, tc.perNode)
			}
			if _, ok := l.Nodes["cpu-node"][gpus]; ok {
				t.Errorf("cpu-node, which publishes no device, has %s in its left over", gpus)
			}
		})
	}
}
