package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestNode transcribes TestSetDefaultNodeStatusAllocatable (kube v1.37.2,
// pkg/apis/core/v1/defaults_test.go).
func TestNode(t *testing.T) {
	capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1000m"), v1.ResourceMemory: resource.MustParse("10G")}
	allocatable := v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("5G")}
	tests := []struct {
		name                                string
		capacity, allocatable, wantAllocate v1.ResourceList
	}{
		{"everything set: no defaulting", capacity, allocatable, allocatable},
		{"allocatable set: no defaulting", nil, allocatable, allocatable},
		{"capacity set: allocatable defaults to capacity", capacity, nil, capacity},
		{"nothing set: allocatable stays nil", nil, nil, nil},
		{"an empty allocatable is not nil: no defaulting", capacity, v1.ResourceList{}, v1.ResourceList{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &v1.Node{Status: v1.NodeStatus{Capacity: tc.capacity.DeepCopy(), Allocatable: tc.allocatable.DeepCopy()}}
			Node(n)
			if diff := cmp.Diff(tc.wantAllocate, n.Status.Allocatable, quantities); diff != "" {
				t.Errorf("allocatable (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.capacity, n.Status.Capacity, quantities); diff != "" {
				t.Errorf("capacity changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeAllocatableIsACopy(t *testing.T) {
	n := &v1.Node{Status: v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}}
	Node(n)
	n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("1")
	if got := n.Status.Capacity[v1.ResourceCPU]; got.Cmp(resource.MustParse("4")) != 0 {
		t.Errorf("changing the defaulted allocatable changed capacity to %s", got.String())
	}
}

// TestObjects covers the other kinds' defaults (kube v1.37.2
// TestSetDefaultPersistentVolume, TestSetDefaultPersistentVolumeClaim,
// TestSetDefaultNamespaceLabels, storage/v1's TestSetDefaultVolumeBindingMode
// and reclaim policy, scheduling/v1's TestDefaultPreemptionPolicy,
// resource/v1's TestSetDefaultAllocationMode).
func TestObjects(t *testing.T) {
	fs := v1.PersistentVolumeFilesystem
	tests := []struct {
		name      string
		obj, want any
	}{{
		name: "a PersistentVolume gets phase Pending, reclaim policy Retain, volumeMode Filesystem",
		obj:  &v1.PersistentVolume{},
		want: &v1.PersistentVolume{Spec: v1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain, VolumeMode: &fs},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumePending}},
	}, {
		name: "a PersistentVolumeClaim gets phase Pending and volumeMode Filesystem",
		obj:  &v1.PersistentVolumeClaim{},
		want: &v1.PersistentVolumeClaim{Spec: v1.PersistentVolumeClaimSpec{VolumeMode: &fs}, Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}},
	}, {
		name: "a Namespace gets its kubernetes.io/metadata.name label",
		obj:  &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}}},
		want: &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a", v1.LabelMetadataName: "web"}}},
	}, {
		// TestSetDefaultReplicationController's cases, for the selector.
		name: "a ReplicationController without a selector selects its template's labels",
		obj:  &v1.ReplicationController{Spec: v1.ReplicationControllerSpec{Template: &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"foo": "bar"}}}}},
		want: &v1.ReplicationController{Spec: v1.ReplicationControllerSpec{Selector: map[string]string{"foo": "bar"},
			Template: &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"foo": "bar"}}}}},
	}, {
		name: "a ReplicationController's own selector is kept",
		obj: &v1.ReplicationController{Spec: v1.ReplicationControllerSpec{Selector: map[string]string{"some": "other"},
			Template: &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"foo": "bar"}}}}},
		want: &v1.ReplicationController{Spec: v1.ReplicationControllerSpec{Selector: map[string]string{"some": "other"},
			Template: &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"foo": "bar"}}}}},
	}, {
		name: "a StorageClass gets reclaim policy Delete and binding mode Immediate",
		obj:  &storagev1.StorageClass{},
		want: &storagev1.StorageClass{ReclaimPolicy: ptr.To(v1.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)},
	}, {
		name: "a StorageClass's WaitForFirstConsumer is kept",
		obj:  &storagev1.StorageClass{VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)},
		want: &storagev1.StorageClass{ReclaimPolicy: ptr.To(v1.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)},
	}, {
		name: "a CSIDriver gets attachRequired true and storageCapacity false",
		obj:  &storagev1.CSIDriver{},
		want: &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(true), StorageCapacity: ptr.To(false)}},
	}, {
		name: "a PriorityClass gets preemptionPolicy PreemptLowerPriority",
		obj:  &schedulingv1.PriorityClass{Value: 10},
		want: &schedulingv1.PriorityClass{Value: 10, PreemptionPolicy: ptr.To(v1.PreemptLowerPriority)},
	}, {
		name: "a ResourceClaim's requests get ExactCount 1, tolerations Equal; All keeps count 0",
		obj: &resourceapi.ResourceClaim{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
			{Name: "a", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", Tolerations: []resourceapi.DeviceToleration{{Key: "k"}}}},
			{Name: "b", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeAll}},
			{Name: "c", FirstAvailable: []resourceapi.DeviceSubRequest{{Name: "x", DeviceClassName: "gpu"}}},
		}}}},
		want: &resourceapi.ResourceClaim{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
			{Name: "a", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
				Tolerations: []resourceapi.DeviceToleration{{Key: "k", Operator: resourceapi.DeviceTolerationOpEqual}}}},
			{Name: "b", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeAll}},
			{Name: "c", FirstAvailable: []resourceapi.DeviceSubRequest{{Name: "x", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}},
		}}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			Object(tc.obj)
			if diff := cmp.Diff(tc.want, tc.obj, quantities); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			Object(tc.obj)
			if diff := cmp.Diff(tc.want, tc.obj, quantities); diff != "" {
				t.Errorf("defaulting twice (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultedObjectsAllocateNothing checks that objects as a cluster
// stores them (already defaulted) go through without an allocation: a
// 5000-node dump is loaded through here.
func TestDefaultedObjectsAllocateNothing(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"version": "v2"}}, Spec: podSpec(t, `
hostNetwork: true
containers: [{name: c, ports: [{containerPort: 80}], resources: {limits: {cpu: "1", memory: 1Gi}}}]
initContainers: [{name: i, resources: {requests: {cpu: 500m}}}]
overhead: {cpu: 100m}
resources: {limits: {cpu: "2"}}
affinity:
  podAntiAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - {topologyKey: zone, labelSelector: {}, matchLabelKeys: [version]}`)}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}}}
	objs := []any{pod, node, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, &v1.PersistentVolume{}, &v1.PersistentVolumeClaim{},
		&storagev1.StorageClass{}, &storagev1.CSIDriver{}, &schedulingv1.PriorityClass{}}
	for _, o := range objs {
		Object(o)
	}
	if err := ValidatePod(pod); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, o := range objs {
			Object(o)
		}
		_ = ValidatePod(pod)
	}); n != 0 {
		t.Errorf("defaulting and validating defaulted objects allocated %v times, want 0", n)
	}
}

func TestResourceListKeepsExactQuantitiesAsWritten(t *testing.T) {
	l := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1.5"), v1.ResourceMemory: resource.MustParse("2Gi"), "example.com/x": resource.MustParse("0.0001")}
	ResourceList(l)
	got := map[v1.ResourceName]string{}
	for k, q := range l {
		got[k] = q.String()
	}
	want := map[v1.ResourceName]string{v1.ResourceCPU: "1500m", v1.ResourceMemory: "2Gi", "example.com/x": "1m"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
