package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// journal records what an offline cluster's observer is told; the start
// of each attempt too with attempts.
type journal struct {
	events   []string
	attempts bool
}

func (j *journal) observer() Observer {
	return Observer{
		Placed: func(pod *v1.Pod, node string, _ int, _ schedruntime.ScheduleResult) {
			j.events = append(j.events, "placed "+pod.Name+" on "+node)
		},
		Failed: func(pod *v1.Pod, f Failure) {
			j.events = append(j.events, "failed "+pod.Name+": "+f.Status.Message())
		},
		Attempting: func(_ context.Context, pod *v1.Pod, attempt int) {
			if !j.attempts {
				return
			}
			j.events = append(j.events, fmt.Sprintf("attempt %d of %s", attempt, pod.Name))
		},
	}
}

func offlineNode(name, cpu string) *v1.Node {
	return schedtest.MakeNode(name).Label(v1.LabelHostname, name).Capacity("cpu", cpu, "memory", "8Gi", "pods", "10").Obj()
}

func TestOfflineWithoutNodesFails(t *testing.T) {
	if _, _, err := NewOffline(context.Background(), &snapshot.Cluster{}, Options{}, Observer{}); !errors.Is(err, ErrNoNodes) {
		t.Errorf("error %v, want ErrNoNodes", err)
	}
}

// TestOfflineDrainReplacesAPod is what a drain plan does: cordon a node,
// evict its pod and submit a replacement, which must land elsewhere.
func TestOfflineDrainReplacesAPod(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("n1", "4"), offlineNode("n2", "4")},
		Pods: []*v1.Pod{
			schedtest.MakePod("a").Namespace("ns").Node("n1").Req("cpu", "1").Obj(),
			schedtest.MakePod("p").Namespace("ns").Req("cpu", "1").Obj(),
		},
	}
	ctx := context.Background()
	j := &journal{attempts: true}
	c, pending, err := NewOffline(ctx, cl, Options{}, j.observer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(pending) != 1 || pending[0].Name != "p" {
		t.Fatalf("pending %v, want [p]", pending)
	}
	c.Submit(pending...)
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	cordoned := offlineNode("n1", "4")
	cordoned.Spec.Unschedulable = true
	if err := c.UpdateNode(cordoned); err != nil {
		t.Fatal(err)
	}
	c.Delete("ns", "a")
	if err := c.Add(schedtest.MakePod("a-2").Namespace("ns").Req("cpu", "1").Obj()); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"attempt 1 of p", "placed p on n2", "attempt 1 of a-2", "placed a-2 on n2"}, j.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	var names []string
	for _, p := range c.Pods("ns") {
		names = append(names, p.Name+"@"+p.Spec.NodeName)
	}
	if d := cmp.Diff([]string{"a-2@n2", "p@n2"}, names); d != "" {
		t.Errorf("the store's pods (-want +got):\n%s", d)
	}
	if c.Placements() != 2 {
		t.Errorf("%d placements, want 2", c.Placements())
	}
}

// TestOfflineDepartureWakesAWaitingPod: a pod that fits nowhere waits in
// the unschedulable pool until a departure frees room, which requeues it
// (NodeResourcesFit's queueing hint) as the informer's delete event would.
func TestOfflineDepartureWakesAWaitingPod(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("n1", "2")},
		Pods:  []*v1.Pod{schedtest.MakePod("big").Namespace("ns").Node("n1").Req("cpu", "2").Obj()},
	}
	ctx := context.Background()
	j := &journal{attempts: true}
	c, _, err := NewOffline(ctx, cl, Options{}, j.observer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Add(schedtest.MakePod("q").Namespace("ns").Req("cpu", "1").Obj()); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(schedtest.MakePod("q").Namespace("ns").Obj()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("adding a pod twice: %v, want an error", err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Delete("ns", "big")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"attempt 1 of q", "failed q: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", "attempt 2 of q", "placed q on n1"}
	if d := cmp.Diff(want, j.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// TestOfflinePodsComeBackInTheOrderTheyFailed: pods of equal priority that
// failed one after another are retried in that order once room frees up,
// as on kube-scheduler's clock, where each failure is stamped later than
// the one before (a heap does not keep the order of equal keys: three pods
// failing at one instant come back first, third, second). The room freed
// takes two of the three.
func TestOfflinePodsComeBackInTheOrderTheyFailed(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("n1", "2")},
		Pods:  []*v1.Pod{schedtest.MakePod("big").Namespace("ns").Node("n1").Req("cpu", "2").Obj()},
	}
	ctx := context.Background()
	j := &journal{}
	c, _, err := NewOffline(ctx, cl, Options{NoPreemption: true}, j.observer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, name := range []string{"z", "y", "x"} {
		if err := c.Add(schedtest.MakePod(name).Namespace("ns").Req("cpu", "1").Obj()); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Delete("ns", "big")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	const full = ": 0/1 nodes are available: 1 Insufficient cpu."
	want := []string{"failed z" + full, "failed y" + full, "failed x" + full, "placed z on n1", "placed y on n1", "failed x" + full}
	if d := cmp.Diff(want, j.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// TestOfflineNodeAndClaimArrivalsWakePods: AddNode and AddPVC deliver
// kube's Node/Add and PersistentVolumeClaim/Add events, so the pods they
// help leave the unschedulable pool (without the events they would wait
// there for good); RemoveNode sends Node/Delete, forgets the node and
// returns the pods bound to it, in name order, for the driver to delete.
func TestOfflineNodeAndClaimArrivalsWakePods(t *testing.T) {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data"}},
			ClaimRef:               &v1.ObjectReference{Namespace: "ns", Name: "data", UID: "data"},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("n1", "2")},
		Pods: []*v1.Pod{
			schedtest.MakePod("web-2").Namespace("ns").Node("n1").Req("cpu", "1").Obj(),
			schedtest.MakePod("web-1").Namespace("ns").Node("n1").Req("cpu", "1").Obj(),
		},
		PVs: []*v1.PersistentVolume{pv},
	}
	ctx := context.Background()
	j := &journal{}
	c, _, err := NewOffline(ctx, cl, Options{NoPreemption: true}, j.observer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []*v1.Pod{
		schedtest.MakePod("big").Namespace("ns").Req("cpu", "3").Obj(),
		schedtest.MakePod("db").Namespace("ns").PVC("data").NodeSelector(v1.LabelHostname, "n1").Obj(),
	} {
		if err := c.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.AddNode(offlineNode("n2", "4"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.AddPVC(&v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "data", Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, VolumeName: "pv",
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	})
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"failed big: 0/1 nodes are available: 1 Insufficient cpu.",
		`failed db: 0/1 nodes are available: persistentvolumeclaim "data" not found.`,
		"placed big on n2",
		`failed db: 0/2 nodes are available: persistentvolumeclaim "data" not found.`,
		"placed db on n1",
	}
	if d := cmp.Diff(want, j.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}

	left, err := c.RemoveNode("n1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range left {
		names = append(names, p.Name)
	}
	if d := cmp.Diff([]string{"db", "web-1", "web-2"}, names); d != "" {
		t.Errorf("pods left on the removed node (-want +got):\n%s", d)
	}
	if _, err := c.Current().Get("n1"); err == nil {
		t.Error("n1 is still in the snapshot")
	}
	if _, err := c.RemoveNode("n1"); err == nil {
		t.Error("removing n1 twice: no error")
	}
}

// draCluster is one GPU node with one GPU, a CPU node, and a template for
// one GPU.
func draCluster() *snapshot.Cluster {
	slice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-slice"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: ptr.To("gpu-node"),
			Pool:    resourceapi.ResourcePool{Name: "gpu-node", Generation: 1, ResourceSliceCount: 1},
			Devices: []resourceapi.Device{{Name: "gpu-0"}},
		},
	}
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}
	tmpl := &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "one-gpu", Namespace: "ml"},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}},
		}}},
	}
	return &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("cpu-node", "4"), offlineNode("gpu-node", "4")},
		DRA: snapshot.DRA{
			DeviceClasses: []*resourceapi.DeviceClass{class}, ResourceSlices: []*resourceapi.ResourceSlice{slice},
			ResourceClaimTemplates: []*resourceapi.ResourceClaimTemplate{tmpl},
		},
	}
}

func gpuPod(name string) *v1.Pod {
	p := schedtest.MakePod(name).Namespace("ml").Req("cpu", "1").Obj()
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
	return p
}

// TestOfflineDRAClaimsFollowPods: an arriving pod gets its template claim
// (as the resourceclaim controller makes it) and lands where the device
// is; a second one waits for the device; when the first leaves, its claim
// is deleted (garbage collection), the device is free, and the claim event
// wakes the waiting pod, which gets the device.
func TestOfflineDRAClaimsFollowPods(t *testing.T) {
	ctx := context.Background()
	j := &journal{}
	c, _, err := NewOffline(ctx, draCluster(), Options{}, j.observer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, name := range []string{"a", "b"} {
		if err := c.Add(gpuPod(name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	a, _ := c.Pod("ml", "a")
	devs := c.Devices(a)
	if len(devs) != 1 || devs[0].Device != "gpu-0" || !strings.HasPrefix(devs[0].Claim, "ml/a-gpu-") {
		t.Fatalf("devices of a: %+v, want gpu-0 through its template claim", devs)
	}
	claim := strings.TrimPrefix(devs[0].Claim, "ml/")
	if got, ok := c.DRA.Claim("ml", claim); !ok || len(got.Status.ReservedFor) != 1 || got.Status.ReservedFor[0].Name != "a" {
		t.Fatalf("claim %s: %+v, want reserved for a", claim, got)
	}
	c.Delete("ml", "a")
	if _, ok := c.DRA.Claim("ml", claim); ok {
		t.Errorf("claim %s outlived its pod", claim)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"placed a on gpu-node",
		"failed b: 0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
		"placed b on gpu-node",
	}
	if d := cmp.Diff(want, j.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	b, _ := c.Pod("ml", "b")
	if devs := c.Devices(b); len(devs) != 1 || devs[0].Device != "gpu-0" {
		t.Errorf("devices of b: %+v, want gpu-0", devs)
	}
}
