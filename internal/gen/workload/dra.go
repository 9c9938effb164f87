package workload

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// DRAObjects are a workload's resource.k8s.io/v1 objects.
type DRAObjects struct {
	Classes    []*resourceapi.DeviceClass
	Slices     []*resourceapi.ResourceSlice
	TaintRules []*resourceapi.DeviceTaintRule
	Templates  []*resourceapi.ResourceClaimTemplate
	Claims     []*resourceapi.ResourceClaim
}

func typed(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

const resourceV1 = "resource.k8s.io/v1"

// templateClaim is the claim kube's resourceclaim controller creates for a
// pod's template claim: "<pod>-<claim>-xxxxx", owned by the pod, annotated,
// and recorded in the pod's status.
func templateClaim(names *nameGen, pod *v1.Pod, podClaim string, t *resourceapi.ResourceClaimTemplate) *resourceapi.ResourceClaim {
	base := pod.Name + "-" + podClaim + "-"
	name := names.next(base)
	c := &resourceapi.ResourceClaim{
		TypeMeta: typed(resourceV1, "ResourceClaim"),
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: base, Namespace: pod.Namespace, UID: types.UID("uid-claim-" + name),
			CreationTimestamp: pod.CreationTimestamp, ResourceVersion: "1",
			Labels:          t.Spec.Labels,
			Annotations:     map[string]string{resourceapi.PodResourceClaimAnnotation: podClaim},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}},
		},
		Spec: *t.Spec.Spec.DeepCopy(),
	}
	pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: podClaim, ResourceClaimName: ptr.To(name)})
	return c
}

// allocate records an allocation on a node-local device and, with a
// consumer, the reservation.
func allocate(c *resourceapi.ResourceClaim, node string, results []resourceapi.DeviceRequestAllocationResult, consumer *v1.Pod) {
	c.Finalizers = []string{resourceapi.Finalizer}
	c.Status.Allocation = &resourceapi.AllocationResult{
		Devices: resourceapi.DeviceAllocationResult{Results: results},
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}},
		AllocationTimestamp: ptr.To(metav1.NewTime(Epoch)),
	}
	if consumer != nil {
		c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: consumer.Name, UID: consumer.UID}}
	}
}

// SchedulingWithResourceClaimTemplate is scheduler_perf's DRA benchmark
// (test/integration/scheduler_perf/dra): nodes with one ResourceSlice of
// ten devices each ("test-driver.cdi.k8s.io", the template's attributes
// and capacities), the DeviceClass test-class, InitPods claims in
// namespace "init" already allocated (scheduler_perf's allocResourceClaims
// picks random nodes; here a seeded random node's first free device), and
// MeasurePods pending pods in namespace "test", each with a claim from the
// template test-claim-template, created as the resourceclaim controller
// creates it.
func SchedulingWithResourceClaimTemplate(name string, p Params) *Workload {
	names := newNameGen(p.Seed)
	rng := rand.New(rand.NewPCG(p.Seed, 0xd7a))
	clk := &clock{}
	w := &Workload{Name: name, Namespaces: namespaces("init", "test"), DRA: &DRAObjects{}}
	const driver = "test-driver.cdi.k8s.io"
	const numDevices, numPCIRoots = 10, 2
	free := make([][]int, p.Nodes)
	for i := 0; i < p.Nodes; i++ {
		node := fmt.Sprintf("scheduler-perf-dra-%d", i)
		w.Nodes = append(w.Nodes, &v1.Node{
			TypeMeta:   typed("v1", "Node"),
			ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"node-with-dra": "true", v1.LabelHostname: node}},
			Status: v1.NodeStatus{
				Capacity:    v1.ResourceList{v1.ResourcePods: resource.MustParse("110"), v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("32Gi")},
				Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("110"), v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("32Gi")},
				Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
				Phase:       v1.NodeRunning,
			},
		})
		slice := &resourceapi.ResourceSlice{
			TypeMeta:   typed(resourceV1, "ResourceSlice"),
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("resourceslice-%d", i)},
			Spec: resourceapi.ResourceSliceSpec{
				Driver:   driver,
				Pool:     resourceapi.ResourcePool{Name: fmt.Sprintf("resourceslice-%d", i), Generation: 1, ResourceSliceCount: 1},
				NodeName: ptr.To(node),
			},
		}
		for d := 0; d < numDevices; d++ {
			root := d % numPCIRoots
			str := func(s string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{StringValue: ptr.To(s)} }
			slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{
				Name: fmt.Sprintf("basic-device-%d", d),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"driver": str("xe"), "driverVersion": {VersionValue: ptr.To("1.2.3")},
					"resource.k8s.io/pciRoot": str(fmt.Sprint(root)), "family": str("Arc Pro B-Series"), "health": str("Healthy"),
					"model": str("B60"), "pciAddress": str(fmt.Sprintf("0000:0%d:00.0", d)), "pciId": str("0xe211"),
					"pciRoot": str(fmt.Sprintf("0%d", root)), "resource.kubernetes.io/pciBusID": str(fmt.Sprintf("0000:0%d:00.0", d)),
					"resource.kubernetes.io/pciRoot": str(fmt.Sprintf("pci0000:0%d", root)), "sriov": {BoolValue: ptr.To(true)}, "type": str("gpu"),
				},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
					"memory": {Value: resource.MustParse("24480Mi")}, "millicores": {Value: resource.MustParse("1k")},
				},
			})
			free[i] = append(free[i], d)
		}
		w.DRA.Slices = append(w.DRA.Slices, slice)
	}
	w.DRA.Classes = []*resourceapi.DeviceClass{{
		TypeMeta:   typed(resourceV1, "DeviceClass"),
		ObjectMeta: metav1.ObjectMeta{Name: "test-class"},
		Spec:       resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "test-driver.cdi.k8s.io"`}}}},
	}}
	spec := resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
		Name: "req-0", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "test-class", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
	}}}}
	for i := 0; i < p.InitPods; i++ {
		c := &resourceapi.ResourceClaim{
			TypeMeta:   typed(resourceV1, "ResourceClaim"),
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-claim-%d", i), Namespace: "init", UID: types.UID(fmt.Sprintf("uid-init-claim-%d", i)), ResourceVersion: "1", CreationTimestamp: metav1.NewTime(Epoch)},
			Spec:       *spec.DeepCopy(),
		}
		// A random node with a free device; claims beyond the devices
		// stay unallocated, as scheduler_perf's would.
		for tries := 0; tries < p.Nodes; tries++ {
			n := rng.IntN(p.Nodes)
			if len(free[n]) == 0 {
				continue
			}
			d := free[n][0]
			free[n] = free[n][1:]
			allocate(c, w.Nodes[n].Name, []resourceapi.DeviceRequestAllocationResult{{Request: "req-0", Driver: driver, Pool: fmt.Sprintf("resourceslice-%d", n), Device: fmt.Sprintf("basic-device-%d", d)}}, nil)
			break
		}
		w.DRA.Claims = append(w.DRA.Claims, c)
	}
	tmpl := &resourceapi.ResourceClaimTemplate{
		TypeMeta:   typed(resourceV1, "ResourceClaimTemplate"),
		ObjectMeta: metav1.ObjectMeta{Name: "test-claim-template", Namespace: "test"},
		Spec:       resourceapi.ResourceClaimTemplateSpec{Spec: *spec.DeepCopy()},
	}
	w.DRA.Templates = []*resourceapi.ResourceClaimTemplate{tmpl}
	for i := 0; i < p.MeasurePods; i++ {
		name := names.next("test-dra")
		pod := &v1.Pod{
			TypeMeta:   typed("v1", "Pod"),
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test", UID: types.UID("uid-" + name), CreationTimestamp: clk.next()},
			Spec: v1.PodSpec{
				SchedulerName:  v1.DefaultSchedulerName,
				Containers:     []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.1", Resources: v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "resource"}}}}},
				ResourceClaims: []v1.PodResourceClaim{{Name: "resource", ResourceClaimTemplateName: ptr.To("test-claim-template")}},
			},
			Status: v1.PodStatus{Phase: v1.PodPending},
		}
		w.DRA.Claims = append(w.DRA.Claims, templateClaim(names, pod, "resource", tmpl))
		w.Pending = append(w.Pending, pod)
	}
	return w
}
