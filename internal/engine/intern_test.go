package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The interner shares only equal parts: pods whose parts look alike by
// key (the same name and image) but differ (1m against 500u and 1 CPU, 4
// against 3999999u, another command or affinity) keep their own, and every pod marshals
// as before; equal parts end up shared.
func TestInternerKeepsContent(t *testing.T) {
	mk := func(name, cpu string, cmd ...string) *v1.Pod {
		p := schedtest.MakePod(name).Namespace("ns").Label("app", "a").Req("cpu", cpu).Obj()
		p.Spec.Containers[0].Command = cmd
		p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, TopologyKey: "zone",
		}}}}
		return p
	}
	pods := []*v1.Pod{mk("a", "1m"), mk("b", "1m"), mk("c", "500u"), mk("d", "1m", "sleep"), mk("e", "1m"), mk("f", "1")}
	// e: like a but for the anti-affinity's topology key.
	pods[4].Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey = "host"
	node := func(name, cpu string) *v1.Node {
		return schedtest.MakeNode(name).Capacity("cpu", cpu, "memory", "1Gi", "pods", "110").Obj()
	}
	nodes := []*v1.Node{node("n1", "4"), node("n2", "4"), node("n3", "3999999u")}
	// Image names, each node's its own strings: n1 and n2 have the same
	// image, n3 another whose names joined read the same.
	image := func(names ...string) v1.ContainerImage {
		var own []string
		for _, n := range names {
			own = append(own, strings.Clone(n))
		}
		return v1.ContainerImage{Names: own, SizeBytes: 1 << 20}
	}
	nodes[0].Status.Images = []v1.ContainerImage{image("reg/app:1", "reg/app@sha256:1"), image("reg/b:1")}
	nodes[1].Status.Images = []v1.ContainerImage{image("reg/app:1", "reg/app@sha256:1")}
	nodes[2].Status.Images = []v1.ContainerImage{image("reg/app:1reg/app@sha256:1"), image("reg/app:1\x00reg/app@sha256:1")}
	var want [][]byte
	for _, p := range pods {
		want = append(want, marshal(t, p))
	}
	for _, n := range nodes {
		want = append(want, marshal(t, n))
	}
	in := newInterner()
	for _, n := range nodes {
		in.node(n)
	}
	for _, p := range pods {
		in.pod(p)
	}
	var got [][]byte
	for _, p := range pods {
		got = append(got, marshal(t, p))
	}
	for _, n := range nodes {
		got = append(got, marshal(t, n))
	}
	for i := range want {
		if diff := cmp.Diff(string(want[i]), string(got[i])); diff != "" {
			t.Errorf("object %d changed (-before +after):\n%s", i, diff)
		}
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() }
	if !same(pods[0].Spec.Containers, pods[1].Spec.Containers) || !same(pods[0].Labels, pods[3].Labels) || !same(pods[0].Spec.Tolerations, pods[2].Spec.Tolerations) {
		t.Error("equal containers, labels or tolerations are not shared")
	}
	if !same(nodes[0].Status.Allocatable, nodes[1].Status.Allocatable) {
		t.Error("equal allocatable lists are not shared")
	}
	if !same(nodes[0].Status.Images[0].Names, nodes[1].Status.Images[0].Names) {
		t.Error("equal image name lists are not shared")
	}
	if same(nodes[0].Status.Images[0].Names, nodes[2].Status.Images[0].Names) || same(nodes[0].Status.Images[0].Names, nodes[2].Status.Images[1].Names) {
		t.Error("image name lists that differ are shared")
	}
	if q := pods[2].Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; q.Cmp(resource.MustParse("500u")) != 0 {
		t.Errorf("pod c's CPU request reads %s, want 500u", q.String())
	}
	if q := pods[5].Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; q.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("pod f's CPU request reads %s, want 1", q.String())
	}
	if q := nodes[2].Status.Allocatable[v1.ResourceCPU]; q.Cmp(resource.MustParse("3999999u")) != 0 {
		t.Errorf("node n3's allocatable CPU reads %s, want 3999999u", q.String())
	}
	if same(pods[0].Spec.Containers, pods[3].Spec.Containers) {
		t.Error("containers with another command are shared")
	}
	if pods[0].Spec.Affinity != pods[1].Spec.Affinity || pods[0].Spec.Affinity == pods[4].Spec.Affinity {
		t.Error("equal affinities are not shared, or different ones are")
	}
}

func marshal(t *testing.T, o runtime.Object) []byte {
	t.Helper()
	data, err := v1list.Marshal("json", o)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Intern shares the equal parts of a cluster's pods and nodes in place
// (the replay's trace): every object marshals as before, the replicas'
// labels and containers are one map and one list, and a pod that differs
// keeps its own.
func TestInternSharesAClustersEqualParts(t *testing.T) {
	mk := func(name, cpu string) *v1.Pod {
		return schedtest.MakePod(name).Namespace("ns").Label("app", "a").Req("cpu", cpu).Node("n1").Obj()
	}
	cl := &snapshot.Cluster{
		Pods:  []*v1.Pod{mk("a", "1"), mk("b", "1"), mk("c", "2")},
		Nodes: []*v1.Node{schedtest.MakeNode("n1").Capacity("cpu", "4").Obj(), schedtest.MakeNode("n2").Capacity("cpu", "4").Obj()},
	}
	var want [][]byte
	for _, p := range cl.Pods {
		want = append(want, marshal(t, p))
	}
	for _, n := range cl.Nodes {
		want = append(want, marshal(t, n))
	}
	Intern(cl)
	var got [][]byte
	for _, p := range cl.Pods {
		got = append(got, marshal(t, p))
	}
	for _, n := range cl.Nodes {
		got = append(got, marshal(t, n))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects changed (-want +got):\n%s", diff)
	}
	a, b, c := cl.Pods[0], cl.Pods[1], cl.Pods[2]
	if reflect.ValueOf(a.Labels).Pointer() != reflect.ValueOf(c.Labels).Pointer() || &a.Spec.Containers[0] != &b.Spec.Containers[0] {
		t.Error("the replicas' labels or containers are not shared")
	}
	if &a.Spec.Containers[0] == &c.Spec.Containers[0] {
		t.Error("a pod asking for more cpu shares the others' containers")
	}
	if mapAddr(cl.Nodes[0].Status.Capacity) != mapAddr(cl.Nodes[1].Status.Capacity) {
		t.Error("equal node capacities are not shared")
	}
}
