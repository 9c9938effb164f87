package fgd

import (
	"context"
	"math"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestDRARow replays the small trace with kube's default profile and the
// GPUs as DRA devices, the 810m pods asking for T4 GPUs (gpu_spec), and
// checks the claims' allocations against the pods' shapes: the pods that
// share a GPU share a device through its consumable capacity, a
// multi-GPU pod holds whole devices, gpu_spec's selector keeps the pods on
// their model, and the books count what the claims consumed.
func TestDRARow(t *testing.T) {
	tr, policies, _ := smallTrace(t)
	var pol Policy
	for _, p := range policies {
		if p.DRA {
			pol = p
		}
	}
	for _, p := range tr.Pods {
		if p.Annotations[openb.AnnotationGPUMilli] == "810" {
			p.Annotations[openb.AnnotationGPUModel] = "T4"
		}
	}
	w := openb.TunedWorkload(tr.Nodes, tr.Pods, tr.CapacityMilli, 1.3, 42, openb.Epoch)
	pr, err := prepare(tr, w, replayTrace(w), pol, 42, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), pr.trace, pr.options)
	if err != nil {
		t.Fatal(err)
	}
	run, err := pr.finish(res)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]string{}
	for _, n := range w.Nodes {
		models[n.Name] = n.Labels[openb.LabelGPUModel]
	}
	claims := map[string]*resourcev1.ResourceClaim{}
	for _, c := range pr.books.dra.Claims() {
		claims[c.Namespace+"/"+c.OwnerReferences[0].Name] = c
	}
	type holder struct {
		pod   string
		milli int64
	}
	holders := map[string][]holder{}
	var used, placedT4 int64
	for _, p := range w.Pods {
		key := p.Namespace + "/" + p.Name
		perGPU, total := openb.GPUMilli(p)
		if total == 0 {
			continue
		}
		c := claims[key]
		if c == nil {
			t.Fatalf("pod %s has no claim", key)
		}
		node, placed := res.Placements[key]
		if !placed {
			if c.Status.Allocation != nil {
				t.Errorf("pod %s was not placed, its claim is allocated: %v", key, c.Status.Allocation)
			}
			continue
		}
		if c.Status.Allocation == nil {
			t.Fatalf("pod %s placed on %s, its claim is not allocated", key, node)
		}
		rs := c.Status.Allocation.Devices.Results
		if int64(len(rs))*perGPU != total {
			t.Errorf("pod %s (%d GPUs of %dm): %d devices", key, total/perGPU, perGPU, len(rs))
		}
		if spec := p.Annotations[openb.AnnotationGPUModel]; spec != "" {
			if models[node] != spec {
				t.Errorf("pod %s asks for %s, placed on %s (%s)", key, spec, node, models[node])
			}
			placedT4++
		}
		for _, r := range rs {
			if r.Pool != node || r.Driver != openb.DRADriver {
				t.Errorf("pod %s on %s: device %s/%s/%s", key, node, r.Driver, r.Pool, r.Device)
			}
			dev := r.Pool + "/" + r.Device
			q := r.ConsumedCapacity[openb.DRACapacity]
			holders[dev] = append(holders[dev], holder{key, q.Value()})
			used += q.Value()
		}
	}
	shared := 0
	for dev, hs := range holders {
		var sum int64
		for _, h := range hs {
			sum += h.milli
			if h.milli == openb.MilliPerGPU && len(hs) > 1 {
				t.Errorf("device %s: %s holds it whole, and %d pods share it: %v", dev, h.pod, len(hs), hs)
			}
		}
		if sum > openb.MilliPerGPU {
			t.Errorf("device %s: %dm consumed: %v", dev, sum, hs)
		}
		if len(hs) > 1 {
			shared++
		}
	}
	if shared == 0 || placedT4 == 0 {
		t.Errorf("%d devices shared, %d pods placed by gpu_spec: the trace should exercise both", shared, placedT4)
	}
	if pr.books.used != used || used == 0 {
		t.Errorf("books: %dm used, the claims consumed %dm", pr.books.used, used)
	}
	last := -1
	for x, a := range run.Metrics.Alloc {
		if !math.IsNaN(a) {
			last = x
		}
	}
	if f := run.Metrics.Frag[last]; math.IsNaN(f) || f <= 0 {
		t.Errorf("Frag[%d] = %v, want the fragmentation of the devices' free thousandths", last, f)
	}
	if run.Placed == 0 || run.Placed == run.Pods {
		t.Errorf("%d of %d pods placed: at 130%% of the GPUs some must fail", run.Placed, run.Pods)
	}
}

// TestDRAGPUs checks the books' reading of a node's claims: the devices'
// free thousandths, and every allocation that does not match the pod's
// shape refused.
func TestDRAGPUs(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{openb.LabelGPUModel: "T4"}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{openb.GPUResource: resource.MustParse("2")}}}
	pod := func(name, count, milli, model string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Annotations: map[string]string{
			openb.AnnotationGPUCount: count, openb.AnnotationGPUMilli: milli, openb.AnnotationGPUModel: model}}}
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To(name + "-gpu")}}
		return p
	}
	result := func(pool, dev string, milli int64) resourcev1.DeviceRequestAllocationResult {
		return resourcev1.DeviceRequestAllocationResult{Request: "gpu", Driver: openb.DRADriver, Pool: pool, Device: dev,
			ConsumedCapacity: map[resourcev1.QualifiedName]resource.Quantity{openb.DRACapacity: *resource.NewQuantity(milli, resource.DecimalSI)}}
	}
	claim := func(name string, rs ...resourcev1.DeviceRequestAllocationResult) *resourcev1.ResourceClaim {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name + "-gpu", Namespace: "ns", UID: types.UID("uid-" + name)}}
		if rs != nil {
			c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: rs}}
		}
		return c
	}
	tests := []struct {
		name    string
		pods    []*v1.Pod
		claims  []*resourcev1.ResourceClaim
		free    []int64
		wantErr string
	}{
		{name: "shares and a whole device",
			pods:   []*v1.Pod{pod("a", "1", "300", "T4"), pod("b", "1", "460", ""), pod("c", "1", "1000", "")},
			claims: []*resourcev1.ResourceClaim{claim("a", result("n1", "gpu-0", 300)), claim("b", result("n1", "gpu-0", 460)), claim("c", result("n1", "gpu-1", 1000))},
			free:   []int64{240, 0}},
		{name: "two GPUs",
			pods:   []*v1.Pod{pod("a", "2", "1000", "")},
			claims: []*resourcev1.ResourceClaim{claim("a", result("n1", "gpu-0", 1000), result("n1", "gpu-1", 1000))},
			free:   []int64{0, 0}},
		{name: "unallocated", pods: []*v1.Pod{pod("a", "1", "300", "")}, claims: []*resourcev1.ResourceClaim{claim("a")}, wantErr: "without its claim a-gpu allocated"},
		{name: "no claim", pods: []*v1.Pod{pod("a", "1", "300", "")}, wantErr: "without its claim"},
		{name: "too few devices", pods: []*v1.Pod{pod("a", "2", "1000", "")}, claims: []*resourcev1.ResourceClaim{claim("a", result("n1", "gpu-0", 1000))}, wantErr: "allocated 1 devices"},
		{name: "wrong model", pods: []*v1.Pod{pod("a", "1", "300", "V100M16")}, claims: []*resourcev1.ResourceClaim{claim("a", result("n1", "gpu-0", 300))}, wantErr: "node n1 has T4"},
		{name: "another node's device", pods: []*v1.Pod{pod("a", "1", "300", "")}, claims: []*resourcev1.ResourceClaim{claim("a", result("n2", "gpu-0", 300))}, wantErr: "not one of the node's GPUs"},
		{name: "no such device", pods: []*v1.Pod{pod("a", "1", "300", "")}, claims: []*resourcev1.ResourceClaim{claim("a", result("n1", "gpu-2", 300))}, wantErr: "not one of the node's GPUs"},
		{name: "consumed too little", pods: []*v1.Pod{pod("a", "1", "300", "")}, claims: []*resourcev1.ResourceClaim{claim("a", result("n1", "gpu-0", 200))}, wantErr: "consumed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := schedcore.NewDRAManager()
			for _, c := range tt.claims {
				m.AddClaim(c)
			}
			ni := schedcore.NewNodeInfo(tt.pods...)
			ni.SetNode(node)
			g, err := draGPUs(m, ni)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				tt.free = []int64{1000, 1000}
			} else if err != nil {
				t.Fatal(err)
			}
			if g.Model != "T4" || len(g.Free) != 2 || g.Free[0] != tt.free[0] || g.Free[1] != tt.free[1] {
				t.Errorf("GPUs %+v, want model T4, free %v", g, tt.free)
			}
		})
	}
}
