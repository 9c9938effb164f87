package share

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The sharer shares only equal parts: pods whose parts look alike by
// key (the same name and image) but differ (1m against 500u and 1 CPU, 4
// against 3999999u, another command or affinity) keep their own, and every pod marshals
// as before; equal parts end up shared.
func TestSharerKeepsContent(t *testing.T) {
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
	s := New()
	for _, n := range nodes {
		s.Node(n)
	}
	for _, p := range pods {
		s.Pod(p)
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

func marshal(t *testing.T, o any) []byte {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Pods shared on several goroutines at once (as the snapshot loader's
// decoding workers share them) keep their content, and the equal parts of
// all of them end up one: the first stored wins whichever goroutine
// stored it.
func TestSharerConcurrent(t *testing.T) {
	const n = 400
	mk := func(i int) *v1.Pod {
		tmpl := fmt.Sprint(i % 4)
		p := schedtest.MakePod(fmt.Sprint("p", i)).Namespace("ns").Label("app", tmpl).Req("cpu", tmpl+"00m").Obj()
		p.Spec.Tolerations = []v1.Toleration{{Key: "k" + tmpl, Operator: v1.TolerationOpExists}}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": tmpl}}, TopologyKey: "zone",
		}}}}
		return p
	}
	pods := make([]*v1.Pod, n)
	want := make([][]byte, n)
	for i := range pods {
		pods[i] = mk(i)
		want[i] = marshal(t, pods[i])
	}
	s := New()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				s.Pod(pods[i])
			}
		})
	}
	wg.Wait()
	for i, p := range pods {
		if diff := cmp.Diff(string(want[i]), string(marshal(t, p))); diff != "" {
			t.Fatalf("pod %d changed (-before +after):\n%s", i, diff)
		}
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() }
	for i := 4; i < n; i++ {
		a, b := pods[i%4], pods[i]
		if !same(a.Labels, b.Labels) || !same(a.Spec.Containers, b.Spec.Containers) || !same(a.Spec.Tolerations, b.Spec.Tolerations) || a.Spec.Affinity != b.Spec.Affinity {
			t.Fatalf("pods %d and %d, of one template, do not share their parts", i%4, i)
		}
	}
	if same(pods[0].Labels, pods[1].Labels) || same(pods[0].Spec.Containers, pods[1].Spec.Containers) {
		t.Error("pods of two templates share their labels or containers")
	}
}
