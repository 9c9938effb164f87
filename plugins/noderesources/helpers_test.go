package noderesources

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// Resource names kube's tests use.
const (
	extendedResourceA     = v1.ResourceName("example.com/aaa")
	extendedResourceB     = v1.ResourceName("example.com/bbb")
	kubernetesIOResourceA = v1.ResourceName("kubernetes.io/something")
	kubernetesIOResourceB = v1.ResourceName("subdomain.kubernetes.io/something")
	hugePageResourceA     = v1.ResourceName(v1.ResourceHugePagesPrefix + "2Mi")
	extendedRes           = "abc.com/xyz"
)

var (
	defaultResources    = []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
	extendedResourceSet = []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: extendedRes, Weight: 1}}
)

// res is one container's requests in scheduler units, as kube's tests build
// them with framework.Resource.
type res struct {
	cpu, mem, eph int64
	scalars       map[v1.ResourceName]int64
}

// list turns res into a ResourceList with every field set, zeros included
// (kube's newResourcePod does the same, pods: 0 included).
func (r res) list() v1.ResourceList {
	l := v1.ResourceList{
		v1.ResourceCPU:              *resource.NewMilliQuantity(r.cpu, resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(r.mem, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(0, resource.BinarySI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(r.eph, resource.BinarySI),
	}
	for n, q := range r.scalars {
		l[n] = *resource.NewQuantity(q, resource.DecimalSI)
	}
	return l
}

// resourcePod is kube's newResourcePod: one container per usage.
func resourcePod(usage ...res) *v1.Pod {
	p := &v1.Pod{}
	for _, u := range usage {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Resources: v1.ResourceRequirements{Requests: u.list()}})
	}
	return p
}

// withInit is kube's newResourceInitPod.
func withInit(p *v1.Pod, usage ...res) *v1.Pod {
	p.Spec.InitContainers = resourcePod(usage...).Spec.Containers
	return p
}

// withOverhead is kube's newResourceOverheadPod.
func withOverhead(p *v1.Pod, overhead v1.ResourceList) *v1.Pod {
	p.Spec.Overhead = overhead
	return p
}

// withPodRequests is kube's newPodLevelResourcesPod.
func withPodRequests(p *v1.Pod, requests v1.ResourceList) *v1.Pod {
	p.Spec.Resources = &v1.ResourceRequirements{Requests: requests}
	return p
}

// podReq builds a pod with one container per request list (none: no
// container at all, like kube's st.MakePod().Obj()), optionally on a node.
func podReq(node string, containers ...v1.ResourceList) *v1.Pod {
	p := &v1.Pod{}
	p.Spec.NodeName = node
	for i, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "c" + string(rune('0'+i)), Resources: v1.ResourceRequirements{Requests: c}})
	}
	return p
}

var rl = schedtest.ResourceList

// nodeWith is a node whose capacity and allocatable are exactly the list
// (kube's st.MakeNode().Capacity adds pods: 32).
func nodeWith(name string, kv ...string) *v1.Node {
	l := rl(append([]string{"pods", "32"}, kv...)...)
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Capacity: l, Allocatable: l}}
}

// makeNode is kube's util_test makeNode: cpu in milli, memory in bytes,
// extended resources; no pods entry.
func makeNode(name string, milliCPU, memory int64, extended map[string]int64) *v1.Node {
	l := v1.ResourceList{}
	for n, q := range extended {
		l[v1.ResourceName(n)] = *resource.NewQuantity(q, resource.DecimalSI)
	}
	l[v1.ResourceCPU] = *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)
	l[v1.ResourceMemory] = *resource.NewQuantity(memory, resource.BinarySI)
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Capacity: l, Allocatable: l}}
}

func newFit(t *testing.T, args runtime.Object) *Fit {
	t.Helper()
	p, err := NewFit(context.Background(), args, schedcore.NewHandle(nil, 1))
	if err != nil {
		t.Fatalf("NewFit: %v", err)
	}
	return p.(*Fit)
}

func newBalanced(t *testing.T, args runtime.Object) *BalancedAllocation {
	t.Helper()
	p, err := NewBalancedAllocation(context.Background(), args, schedcore.NewHandle(nil, 1))
	if err != nil {
		t.Fatalf("NewBalancedAllocation: %v", err)
	}
	return p.(*BalancedAllocation)
}

// scoreNodes runs PreScore (when asked) and Score for each node of a
// snapshot built from pods and nodes.
func scoreNodes(t *testing.T, pl schedcore.ScorePlugin, pod *v1.Pod, pods []*v1.Pod, nodes []*v1.Node, preScore bool) (schedcore.NodeScoreList, *schedcore.Status) {
	t.Helper()
	for i, p := range pods {
		if p.Name == "" && p.UID == "" {
			p.Name = fmt.Sprintf("existing-%d", i)
		}
	}
	snap := schedcore.NewSnapshot(pods, nodes)
	state := schedcore.NewCycleState()
	if preScore {
		if st := pl.(schedcore.PreScorePlugin).PreScore(context.Background(), state, pod, snap.List()); !st.IsSuccess() {
			return nil, st
		}
	}
	var out schedcore.NodeScoreList
	for _, n := range nodes {
		ni, err := snap.Get(n.Name)
		if err != nil {
			t.Fatalf("snapshot.Get(%q): %v", n.Name, err)
		}
		s, st := pl.Score(context.Background(), state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", n.Name, st)
		}
		out = append(out, schedcore.NodeScore{Name: n.Name, Score: s})
	}
	return out, nil
}
