package explain

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

const zone = v1.LabelTopologyZone

func options(t testing.TB) Options {
	t.Helper()
	cfg, err := engine.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Config: cfg, Registry: reg}
}

func node(name string) *st.NodeWrapper {
	return st.MakeNode(name).Label(v1.LabelHostname, name).Capacity("cpu", "4", "memory", "8Gi", "pods", "110")
}

func explainOn(t *testing.T, cl *snapshot.Cluster, pod *v1.Pod, nodeName string) *report.Explanation {
	t.Helper()
	o := options(t)
	o.Node = nodeName
	rep, err := Run(context.Background(), cl, pod, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestGapsSayWhatWouldMakeThePodFit(t *testing.T) {
	web := func(name, on string) *v1.Pod {
		return st.MakePod(name).Namespace("ns").Label("app", "web").Node(on).Obj()
	}
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		pod   *v1.Pod
		node  string
		want  []report.Gap
	}{
		{
			name:  "a node short of cpu says how much more is needed and what is free",
			nodes: []*v1.Node{node("n1").Obj()},
			pods:  []*v1.Pod{st.MakePod("big").Namespace("ns").Req("cpu", "3250m").Node("n1").Obj()},
			pod:   st.MakePod("p").Namespace("ns").Req("cpu", "1").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "NodeResourcesFit", Gap: "needs 250m cpu more (free 750m of 4)"}},
		},
		{
			name:  "a request larger than the node says no eviction helps",
			nodes: []*v1.Node{node("n1").Obj()},
			pod:   st.MakePod("p").Namespace("ns").Req("cpu", "6", "memory", "1Gi").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "NodeResourcesFit", Gap: "requests 6 cpu, more than the node's allocatable 4 (removing pods cannot help)"}},
		},
		{
			name:  "a full node says it runs its maximum of pods",
			nodes: []*v1.Node{st.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "1").Obj()},
			pods:  []*v1.Pod{st.MakePod("a").Namespace("ns").Node("n1").Obj()},
			pod:   st.MakePod("p").Namespace("ns").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "NodeResourcesFit", Gap: "node already runs 1 pods, its maximum (allocatable pods 1)"}},
		},
		{
			name:  "an untolerated taint is named",
			nodes: []*v1.Node{node("n1").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Taint("soft", "x", v1.TaintEffectPreferNoSchedule).Obj()},
			pod:   st.MakePod("p").Namespace("ns").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "TaintToleration", Gap: "taint dedicated=gpu:NoSchedule not tolerated"}},
		},
		{
			name:  "a cordoned node says so",
			nodes: []*v1.Node{node("n1").Unschedulable().Obj()},
			pod:   st.MakePod("p").Namespace("ns").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "NodeUnschedulable", Gap: "node is cordoned (spec.unschedulable); uncordon it or tolerate node.kubernetes.io/unschedulable:NoSchedule"}},
		},
		{
			name:  "a node selector names the wanted and the actual label",
			nodes: []*v1.Node{node("n1").Label("zone", "b").Obj()},
			pod:   st.MakePod("p").Namespace("ns").NodeSelector("zone", "a").NodeSelector("disk", "ssd").Obj(),
			node:  "n1",
			want: []report.Gap{
				{Plugin: "NodeAffinity", Gap: "node selector: label disk=ssd wanted, node has no disk label"},
				{Plugin: "NodeAffinity", Gap: "node selector: label zone=a wanted, node has zone=b"},
			},
		},
		{
			name:  "a required node affinity term names its first failing requirement",
			nodes: []*v1.Node{node("n1").Label(zone, "us-east-1b").Obj()},
			pod:   st.MakePod("p").Namespace("ns").NodeAffinityIn(zone, "us-east-1a").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "NodeAffinity", Gap: "node affinity term 1: label topology.kubernetes.io/zone=us-east-1a wanted, node has topology.kubernetes.io/zone=us-east-1b"}},
		},
		{
			name:  "a host port in use names the pod using it",
			nodes: []*v1.Node{node("n1").Obj()},
			pods:  []*v1.Pod{st.MakePod("x").Namespace("ns").HostPort(8080, v1.ProtocolTCP, "").Node("n1").Obj()},
			pod:   st.MakePod("p").Namespace("ns").HostPort(8080, v1.ProtocolTCP, "").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "NodePorts", Gap: "host port 8080/TCP in use by ns/x"}},
		},
		{
			name: "a topology spread violation gives the skew the pod would cause",
			nodes: []*v1.Node{
				node("a1").Label(zone, "a").Obj(), node("b1").Label(zone, "b").Obj(),
			},
			pods: []*v1.Pod{web("w1", "a1"), web("w2", "a1"), web("w3", "a1")},
			pod:  st.MakePod("p").Namespace("ns").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, map[string]string{"app": "web"}, nil).Obj(),
			node: "a1",
			want: []report.Gap{{Plugin: "PodTopologySpread", Gap: "zone skew would be 4 > maxSkew 1 (zone a has 3 matching pods, the emptiest 0)"}},
		},
		{
			name:  "the pod's own anti-affinity names the pod it conflicts with",
			nodes: []*v1.Node{node("n1").Obj()},
			pods:  []*v1.Pod{web("web-2", "n1")},
			pod:   st.MakePod("p").Namespace("ns").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "web"}).Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "InterPodAffinity", Gap: "anti-affinity with pod ns/web-2 on this node"}},
		},
		{
			name:  "anti-affinity in a zone names the pod and its node",
			nodes: []*v1.Node{node("n1").Label(zone, "a").Obj(), node("n2").Label(zone, "a").Obj()},
			pods:  []*v1.Pod{web("web-2", "n2")},
			pod:   st.MakePod("p").Namespace("ns").PodAntiAffinity(zone, map[string]string{"app": "web"}).Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "InterPodAffinity", Gap: "anti-affinity with pod ns/web-2 in zone a (on node n2)"}},
		},
		{
			name:  "an existing pod's anti-affinity names that pod",
			nodes: []*v1.Node{node("n1").Obj()},
			pods:  []*v1.Pod{st.MakePod("db").Namespace("ns").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "web"}).Node("n1").Obj()},
			pod:   st.MakePod("p").Namespace("ns").Label("app", "web").Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "InterPodAffinity", Gap: "pod ns/db on this node has anti-affinity to this pod"}},
		},
		{
			name:  "unmet pod affinity says no matching pod is in the domain",
			nodes: []*v1.Node{node("n1").Label(zone, "a").Obj(), node("n2").Label(zone, "b").Obj()},
			pods:  []*v1.Pod{st.MakePod("db").Namespace("ns").Label("app", "db").Node("n2").Obj()},
			pod:   st.MakePod("p").Namespace("ns").PodAffinity(zone, map[string]string{"app": "db"}).Obj(),
			node:  "n1",
			want:  []report.Gap{{Plugin: "InterPodAffinity", Gap: "pod affinity term 1: no pod matching app=db in zone a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := explainOn(t, &snapshot.Cluster{Nodes: tt.nodes, Pods: tt.pods}, tt.pod, tt.node)
			if len(rep.Nodes) != 1 || rep.Nodes[0].Node != tt.node {
				t.Fatalf("nodes = %+v, want only %s", rep.Nodes, tt.node)
			}
			if d := cmp.Diff(tt.want, rep.Nodes[0].Gaps); d != "" {
				t.Errorf("gaps (-want +got):\n%s\nfailures: %+v", d, rep.Nodes[0].Failures)
			}
		})
	}
}

func TestRunExplainsABoundPodAsIfPending(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{node("n1").Obj(), node("n2").Obj()},
		Pods: []*v1.Pod{
			st.MakePod("other").Namespace("ns").Req("cpu", "2").Node("n2").Obj(),
			st.MakePod("p").Namespace("ns").Req("cpu", "1").Node("n2").Obj(),
		},
	}
	rep := explainOn(t, cl, cl.Pods[1], "")
	if rep.BoundNode != "n2" || rep.NumFeasible != 2 || rep.Selected != "n1" {
		t.Fatalf("bound %q, feasible %d, selected %q; want n2, 2, n1", rep.BoundNode, rep.NumFeasible, rep.Selected)
	}
	if rep.BoundNodeRank != 2 || rep.BoundNodeTotal == nil {
		t.Errorf("bound node rank = %d (total %v), want 2", rep.BoundNodeRank, rep.BoundNodeTotal)
	}
	if cl.Pods[1].Spec.NodeName != "n2" {
		t.Error("the cluster's pod was modified")
	}
	// Its own 1 cpu is not counted on n2: 2 of 4 cpu are free there.
	rep = explainOn(t, cl, cl.Pods[1], "n2")
	if got := rep.Nodes[0].Free["cpu"]; got != 2000 {
		t.Errorf("free cpu on n2 = %dm, want 2000m (the pod itself taken off)", got)
	}
}

func TestRunPicksTheNearestRejectedNodes(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{
			node("two-failures").Taint("a", "b", v1.TaintEffectNoSchedule).Obj(),
			node("little-free").Obj(),
			node("more-free").Obj(),
		},
		Pods: []*v1.Pod{
			st.MakePod("x").Namespace("ns").Req("cpu", "3").Node("little-free").Obj(),
			st.MakePod("y").Namespace("ns").Req("cpu", "2").Node("more-free").Obj(),
			st.MakePod("z").Namespace("ns").Req("cpu", "3500m").Node("two-failures").Obj(),
		},
	}
	o := options(t)
	o.Nearest = 2
	rep, err := Run(context.Background(), cl, st.MakePod("p").Namespace("ns").Req("cpu", "3").Obj(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"more-free", "little-free"}, rep.Nearest); d != "" {
		t.Errorf("nearest (-want +got):\n%s", d)
	}
	if rep.Message != "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu." {
		t.Errorf("message = %q", rep.Message)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{node("n1").Obj()}}
	tests := []struct {
		name    string
		cl      *snapshot.Cluster
		pod     *v1.Pod
		node    string
		wantErr error
		wantMsg string
	}{
		{"a pod of another scheduler", cl, st.MakePod("p").SchedulerName("other").Obj(), "", ErrUnknownProfile, `pod default/p has schedulerName "other", which is not a profile of the configuration (profiles: default-scheduler): no such scheduler profile`},
		{"a node that does not exist", cl, st.MakePod("p").Obj(), "nope", ErrUnknownNode, `--node: node "nope" is not in the cluster: no such node`},
		{"a cluster without nodes", &snapshot.Cluster{}, st.MakePod("p").Obj(), "", ErrNoNodes, "the cluster has no nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t)
			o.Node = tt.node
			_, err := Run(context.Background(), tt.cl, tt.pod, o)
			if !errors.Is(err, tt.wantErr) || err.Error() != tt.wantMsg {
				t.Errorf("err = %v, want %q", err, tt.wantMsg)
			}
		})
	}
}

func TestFindPodSaysWhichNamespace(t *testing.T) {
	cl := &snapshot.Cluster{Pods: []*v1.Pod{st.MakePod("x").Namespace("a").Obj()}}
	if p, err := FindPod(cl, "a", "x"); err != nil || p.Name != "x" {
		t.Fatalf("FindPod(a, x) = %v, %v", p, err)
	}
	_, err := FindPod(cl, "y", "x")
	if !errors.Is(err, ErrPodNotFound) || err.Error() != `pods "x" not found in namespace "y"` {
		t.Errorf("err = %v", err)
	}
}

func TestGapsForNodesLeftOutByAPreFilterResult(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{node("n1").Obj(), node("n2").Obj()},
		Pods:  []*v1.Pod{st.MakePod("x").Namespace("ns").Req("cpu", "2").Node("n1").Obj()},
	}
	pod := st.MakePod("p").Namespace("ns").Obj()
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}}}},
	}}}
	pod.Spec.Containers[0].Resources.Requests = st.ResourceList("cpu", "3")
	rep := explainOn(t, cl, pod, "n2")
	want := report.ExplainNode{
		Node:         "n2",
		NodeFailures: &report.NodeFailures{Failures: []report.Failure{{Plugin: "", Reason: "node(s) didn't satisfy plugin(s) [NodeAffinity]", Code: "UnschedulableAndUnresolvable", First: true}}},
		NodeScores:   &report.NodeScores{},
		NodeDetail: &report.NodeDetail{
			Gaps: []report.Gap{{Plugin: "NodeAffinity", Gap: "node affinity term 1: node name n1 wanted, node is n2"}},
			Free: map[string]int64{"cpu": 4000, "memory": 8 << 30, "pods": 110},
		},
	}
	if d := cmp.Diff(want, rep.Nodes[0]); d != "" {
		t.Errorf("n2 (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"n1", "n2"}, explainOn(t, cl, pod, "").Nearest); d != "" {
		t.Errorf("nearest (-want +got): resolvable failures first\n%s", d)
	}
}

func TestRunSaysWhichPreFilterPluginRejectsThePod(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{node("n1").Obj(), node("n2").Obj()}}
	rep := explainOn(t, cl, st.MakePod("p").Namespace("ns").PVC("gone").Obj(), "")
	want := report.PreFilterOutcome{Code: "UnschedulableAndUnresolvable", Plugin: "VolumeRestrictions", Reason: `persistentvolumeclaim "gone" not found`}
	if d := cmp.Diff(want, rep.PreFilter); d != "" {
		t.Errorf("preFilter (-want +got):\n%s", d)
	}
	if rep.Message != `0/2 nodes are available: persistentvolumeclaim "gone" not found.` {
		t.Errorf("message = %q", rep.Message)
	}
	for _, n := range rep.Nodes {
		if d := cmp.Diff([]report.Failure{{Plugin: "VolumeRestrictions", Reason: want.Reason, Code: want.Code, First: true}}, n.Failures); d != "" {
			t.Errorf("node %s failures (-want +got):\n%s", n.Node, d)
		}
	}
	if len(rep.Nearest) != 0 {
		t.Errorf("nearest = %v: every node fails alike at PreFilter", rep.Nearest)
	}
	// --node still says it for that node.
	rep = explainOn(t, cl, st.MakePod("p").Namespace("ns").PVC("gone").Obj(), "n2")
	if d := cmp.Diff([]report.Gap{{Plugin: "VolumeRestrictions", Gap: want.Reason}}, rep.Nodes[0].Gaps); d != "" {
		t.Errorf("--node gaps (-want +got):\n%s", d)
	}
}

func TestRunCountsThePodsPreemptionNominatedToANode(t *testing.T) {
	nominated := func(name string, prio int32, on string) *v1.Pod {
		p := st.MakePod(name).Namespace("ns").Priority(prio).Req("cpu", "2").Obj()
		p.Status.NominatedNodeName = on
		return p
	}
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{node("n1").Obj()},
		Pods: []*v1.Pod{
			st.MakePod("running").Namespace("ns").Req("cpu", "1").Node("n1").Obj(),
			nominated("high", 1000, "n1"),
		},
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		feasible bool
		gaps     []report.Gap
	}{
		{"a lower-priority pod finds the nominated pod's room taken", st.MakePod("p").Namespace("ns").Priority(10).Req("cpu", "1500m").Obj(), false, []report.Gap{
			{Gap: "preemption nominated this node for ns/high (priority 1000): the filters count them as running here"},
			{Plugin: "NodeResourcesFit", Gap: "needs 500m cpu more (free 1 of 4)"},
		}},
		{"a higher-priority pod does not count it", st.MakePod("p").Namespace("ns").Priority(2000).Req("cpu", "1500m").Obj(), true, nil},
		{"the nominated pod itself does not count itself", cl.Pods[1], true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := explainOn(t, cl, tt.pod, "n1")
			n := rep.Nodes[0]
			if n.Feasible != tt.feasible {
				t.Fatalf("feasible = %v, want %v (failures %+v)", n.Feasible, tt.feasible, n.Failures)
			}
			if d := cmp.Diff(tt.gaps, n.Gaps); d != "" {
				t.Errorf("gaps (-want +got):\n%s", d)
			}
			if !tt.feasible && rep.Message != "0/1 nodes are available: 1 Insufficient cpu." {
				t.Errorf("message = %q", rep.Message)
			}
		})
	}
}

func TestRunSelectsTheNominatedNodeWhenItFits(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{node("busy").Obj(), node("idle").Obj()},
		Pods:  []*v1.Pod{st.MakePod("x").Namespace("ns").Req("cpu", "2").Node("busy").Obj()},
	}
	tests := []struct {
		name, nominated, want string
	}{
		{"a nominated node that fits is taken, though another scores better", "busy", "busy"},
		{"a nominated node that no longer fits: the best total", "gone", "idle"},
		{"no nomination: the best total", "", "idle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := st.MakePod("p").Namespace("ns").Req("cpu", "1").Obj()
			pod.Status.NominatedNodeName = tt.nominated
			rep := explainOn(t, cl, pod, "")
			if rep.Selected != tt.want || rep.NominatedNode != tt.nominated || rep.Ranking[0] != "idle" {
				t.Errorf("selected %q (nominated %q, best %q), want %q", rep.Selected, rep.NominatedNode, rep.Ranking[0], tt.want)
			}
		})
	}
}

// TestGapsHonourTheConfiguredDefaultSpreadConstraints: a pod without
// constraints of its own is spread by the configuration's default
// constraints (over its Service's pods); the gap comes from
// PodTopologySpread's own counts, so it gives the skew, not a guess.
func TestGapsHonourTheConfiguredDefaultSpreadConstraints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sched.yaml")
	cfgYAML := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
`
	if err := os.WriteFile(path, []byte(cfgYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	web := func(name, on string) *v1.Pod {
		return st.MakePod(name).Namespace("ns").Label("app", "web").Node(on).Obj()
	}
	svc := &v1.Service{}
	svc.Name, svc.Namespace, svc.Spec.Selector = "web", "ns", map[string]string{"app": "web"}
	cl := &snapshot.Cluster{
		Nodes:    []*v1.Node{node("a1").Label(zone, "a").Obj(), node("b1").Label(zone, "b").Obj()},
		Pods:     []*v1.Pod{web("w1", "a1"), web("w2", "a1"), web("w3", "a1")},
		Services: []*v1.Service{svc},
	}
	o := options(t)
	o.Config, o.Node = cfg, "a1"
	rep, err := Run(context.Background(), cl, st.MakePod("p").Namespace("ns").Label("app", "web").Obj(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []report.Gap{{Plugin: "PodTopologySpread", Gap: "zone skew would be 4 > maxSkew 1 (zone a has 3 matching pods, the emptiest 0)"}}
	if d := cmp.Diff(want, rep.Nodes[0].Gaps); d != "" {
		t.Errorf("gaps (-want +got):\n%s\nfailures: %+v", d, rep.Nodes[0].Failures)
	}
}
