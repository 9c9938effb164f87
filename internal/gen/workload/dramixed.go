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

// DRACluster is a GPU cluster in the spirit of the conformance dra cases,
// at any size: nodes with L4, A100 and H100 GPUs (H100 nodes with RDMA
// NICs on the same PCIe roots), MIG-partitionable A100s (shared
// counters), multi-allocatable vGPUs (consumable capacity), fabric
// accelerators with binding conditions, FPGAs shared per zone (node
// selectors), device taints and DeviceTaintRules, device-plugin GPU nodes,
// and declared node features; pending pods with template claims (counts,
// CEL selectors, matchAttribute, allocationMode All, firstAvailable,
// admin access, tolerations, capacity requests), shared claims, DRA-backed
// extended resources, missing classes and templates, and pods needing
// node features. Running pods hold allocated claims.
func DRACluster(name string, p Params) *Workload {
	rng := rand.New(rand.NewPCG(p.Seed, 0xd7a2))
	names := newNameGen(p.Seed)
	clk := &clock{}
	g := &draGen{rng: rng, names: names, w: &Workload{Name: name, Namespaces: namespaces("ml", "team-a", "default"), DRA: &DRAObjects{}}}
	g.classes()
	g.templates()
	for i := 0; i < p.Nodes; i++ {
		g.node(i)
	}
	g.zoneFPGAs()
	g.taintRules()
	for i := 0; i < p.InitPods; i++ {
		g.running(clk)
	}
	for i := 0; i < p.MeasurePods; i++ {
		g.pending(clk)
	}
	return g.w
}

type draNode struct {
	node *v1.Node
	// free devices of the node's GPU pool (whole GPUs only), in order.
	gpus   []string
	driver string
	pool   string
}

type draGen struct {
	rng   *rand.Rand
	names *nameGen
	w     *Workload
	nodes []*draNode
	tmpl  map[string]*resourceapi.ResourceClaimTemplate
	// shared counts the shared claims made.
	shared int
}

var zones = []string{"zone-a", "zone-b", "zone-c"}

func str(s string) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{StringValue: ptr.To(s)}
}
func intAttr(i int64) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{IntValue: ptr.To(i)}
}

func cel(expr string) resourceapi.DeviceSelector {
	return resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}
}

func (g *draGen) class(name string, extended string, exprs ...string) {
	c := &resourceapi.DeviceClass{TypeMeta: typed(resourceV1, "DeviceClass"), ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(Epoch)}}
	for _, e := range exprs {
		c.Spec.Selectors = append(c.Spec.Selectors, cel(e))
	}
	if extended != "" {
		c.Spec.ExtendedResourceName = ptr.To(extended)
	}
	g.w.DRA.Classes = append(g.w.DRA.Classes, c)
}

func (g *draGen) classes() {
	isGPU := `device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].type == "gpu"`
	g.class("gpu.example.com", "example.com/gpu", isGPU)
	g.class("mig.gpu.example.com", "", `device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].type == "mig"`)
	g.class("h100.gpu.example.com", "", isGPU, `device.attributes["gpu.example.com"].model == "H100-80GB"`)
	g.class("a100.gpu.example.com", "", isGPU+` && device.attributes["gpu.example.com"].model.startsWith("A100")`)
	g.class("large-memory.gpu.example.com", "", isGPU, `device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0`)
	g.class("nic.example.com", "", `device.driver == "nic.example.com" && device.attributes["nic.example.com"].rdma`)
	g.class("fpga.accel.example.com", "", `device.driver == "accel.example.com"`)
	g.class("vgpu.example.com", "", `device.driver == "vgpu.example.com"`)
	g.class("fabric.example.com", "example.com/fabric", `device.driver == "fabric.example.com"`)
}

func exact(class string, count int64, sel ...string) *resourceapi.ExactDeviceRequest {
	r := &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}
	for _, s := range sel {
		r.Selectors = append(r.Selectors, cel(s))
	}
	return r
}

func (g *draGen) template(name string, spec resourceapi.DeviceClaim) {
	t := &resourceapi.ResourceClaimTemplate{
		TypeMeta:   typed(resourceV1, "ResourceClaimTemplate"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"},
		Spec: resourceapi.ResourceClaimTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/part-of": "ml-platform"}},
			Spec:       resourceapi.ResourceClaimSpec{Devices: spec},
		},
	}
	if g.tmpl == nil {
		g.tmpl = map[string]*resourceapi.ResourceClaimTemplate{}
	}
	g.tmpl[name] = t
	g.w.DRA.Templates = append(g.w.DRA.Templates, t)
}

func req(name string, e *resourceapi.ExactDeviceRequest) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, Exactly: e}
}

func sub(name string, e *resourceapi.ExactDeviceRequest) resourceapi.DeviceSubRequest {
	return resourceapi.DeviceSubRequest{Name: name, DeviceClassName: e.DeviceClassName, Selectors: e.Selectors, AllocationMode: e.AllocationMode, Count: e.Count, Tolerations: e.Tolerations, Capacity: e.Capacity}
}

func (g *draGen) templates() {
	mem := func(q string) string {
		return `device.capacity["gpu.example.com"].memory.compareTo(quantity("` + q + `")) >= 0`
	}
	l4 := `device.attributes["gpu.example.com"].model == "L4"`
	g.template("gpu-1", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", exact("gpu.example.com", 1))}})
	g.template("gpu-2", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", exact("gpu.example.com", 2))}})
	g.template("gpu-4-same-model", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", exact("gpu.example.com", 4))},
		Constraints: []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName("gpu.example.com/model"))}}})
	g.template("h100-8", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", exact("h100.gpu.example.com", 8))}})
	g.template("gpu-mem40", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", exact("gpu.example.com", 1, mem("40Gi")))}})
	g.template("gpu-mem80-x2", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", exact("gpu.example.com", 2, mem("80Gi")))}})
	g.template("infer-prioritized", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{
		sub("h100", exact("h100.gpu.example.com", 1)), sub("a100", exact("a100.gpu.example.com", 1)), sub("l4", exact("gpu.example.com", 1, l4))}}}})
	g.template("train-prioritized", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpus", FirstAvailable: []resourceapi.DeviceSubRequest{
		sub("big", exact("large-memory.gpu.example.com", 2)), sub("small", exact("gpu.example.com", 4, mem("24Gi")))}}}})
	g.template("mig-1g", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("mig", exact("mig.gpu.example.com", 1, `device.attributes["gpu.example.com"].profile == "1g.5gb"`))}})
	g.template("mig-3g", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("mig", exact("mig.gpu.example.com", 1, `device.attributes["gpu.example.com"].profile == "3g.20gb"`))}})
	g.template("infer-small-prioritized", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{
		sub("mig", exact("mig.gpu.example.com", 1, `device.attributes["gpu.example.com"].profile == "1g.5gb"`)), sub("l4", exact("gpu.example.com", 1, l4))}}}})
	all := exact("gpu.example.com", 0, l4)
	all.AllocationMode, all.Count = resourceapi.DeviceAllocationModeAll, 0
	g.template("all-l4", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpus", all)}})
	g.template("gpu-nic", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", exact("gpu.example.com", 1)), req("nic", exact("nic.example.com", 1))},
		Constraints: []resourceapi.DeviceConstraint{{Requests: []string{"gpu", "nic"}, MatchAttribute: ptr.To(resourceapi.FullyQualifiedName("resource.kubernetes.io/pcieRoot"))}}})
	g.template("fpga", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("fpga", exact("fpga.accel.example.com", 1))}})
	admin := exact("gpu.example.com", 1)
	admin.AdminAccess = ptr.To(true)
	g.template("gpu-monitor", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", admin)}})
	tol := exact("gpu.example.com", 1)
	tol.Tolerations = []resourceapi.DeviceToleration{{Key: "gpu.example.com/unhealthy", Operator: resourceapi.DeviceTolerationOpExists, Effect: resourceapi.DeviceTaintEffectNoSchedule}}
	g.template("gpu-tolerate-unhealthy", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("gpu", tol)}})
	for _, gi := range []string{"10Gi", "30Gi"} {
		v := exact("vgpu.example.com", 1)
		v.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{"memory": resource.MustParse(gi)}}
		g.template("vgpu-"+gi, resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("vgpu", v)}})
	}
	g.template("fabric-1", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("accel", exact("fabric.example.com", 1))}})
	g.template("tpu", resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{req("tpu", exact("tpu.example.com", 1))}})
}

var declarableFeatures = []string{"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"}

func (g *draGen) node(i int) {
	name := fmt.Sprintf("node-%05d", i)
	zone := zones[i%len(zones)]
	cpu := []string{"32", "64", "96"}[g.rng.IntN(3)]
	mem := map[string]string{"32": "128Gi", "64": "256Gi", "96": "512Gi"}[cpu]
	n := &v1.Node{
		TypeMeta: typed("v1", "Node"),
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{
			v1.LabelHostname: name, v1.LabelTopologyZone: zone, "kubernetes.io/os": "linux"}},
		Status: v1.NodeStatus{
			Capacity:    v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem), v1.ResourcePods: resource.MustParse("110")},
			Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem), v1.ResourcePods: resource.MustParse("110")},
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	for _, f := range declarableFeatures {
		if g.rng.IntN(2) == 0 {
			n.Status.DeclaredFeatures = append(n.Status.DeclaredFeatures, f)
		}
	}
	dn := &draNode{node: n, driver: "gpu.example.com", pool: name}
	g.w.Nodes = append(g.w.Nodes, n)
	g.nodes = append(g.nodes, dn)
	gpuTaint := func() {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "gpu.example.com/present", Effect: v1.TaintEffectNoSchedule})
	}
	switch k := g.rng.IntN(100); {
	case k < 40:
		// CPU only.
	case k < 55:
		gpuTaint()
		g.gpuSlice(dn, "L4", "Ada Lovelace", "24Gi", 4)
	case k < 67:
		gpuTaint()
		model, memory := "A100-40GB", "40Gi"
		if g.rng.IntN(3) == 0 {
			model, memory = "A100-80GB", "80Gi"
		}
		g.gpuSlice(dn, model, "Ampere", memory, 4)
	case k < 75:
		gpuTaint()
		g.gpuSlice(dn, "H100-80GB", "Hopper", "80Gi", 8)
		g.nicSlice(name)
	case k < 82:
		gpuTaint()
		g.migSlices(name)
	case k < 87:
		g.vgpuSlice(name)
	case k < 92:
		// A device plugin provides the GPUs: DRA-backed extended
		// resources stay with NodeResourcesFit here.
		gpus := resource.MustParse("4")
		n.Status.Capacity["example.com/gpu"], n.Status.Allocatable["example.com/gpu"] = gpus, gpus
	case k < 96:
		g.fabricSlice(name)
	default:
		gpuTaint()
		g.gpuSlice(dn, "B200", "Blackwell", "192Gi", 8)
	}
}

func (g *draGen) slice(name, driver, pool string, count int64) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		TypeMeta:   typed(resourceV1, "ResourceSlice"),
		ObjectMeta: metav1.ObjectMeta{Name: g.names.next(name + "-" + driver + "-"), CreationTimestamp: metav1.NewTime(Epoch)},
		Spec:       resourceapi.ResourceSliceSpec{Driver: driver, Pool: resourceapi.ResourcePool{Name: pool, Generation: 1, ResourceSliceCount: count}},
	}
	g.w.DRA.Slices = append(g.w.DRA.Slices, s)
	return s
}

func (g *draGen) gpuSlice(dn *draNode, model, arch, memory string, count int) {
	name := dn.node.Name
	s := g.slice(name, "gpu.example.com", name, 1)
	s.Spec.NodeName = ptr.To(name)
	for d := 0; d < count; d++ {
		dev := resourceapi.Device{
			Name: fmt.Sprintf("gpu-%d", d),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"type": str("gpu"), "model": str(model), "architecture": str(arch), "index": intAttr(int64(d)),
				"numaNode":                        intAttr(int64(d * 2 / count)),
				"resource.kubernetes.io/pcieRoot": str(fmt.Sprintf("pci0000:%02x", (d/2)*0x20)),
				"driverVersion":                   {VersionValue: ptr.To("570.86.15")},
			},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(memory)}},
		}
		if g.rng.IntN(25) == 0 {
			dev.Taints = []resourceapi.DeviceTaint{{Key: "gpu.example.com/unhealthy", Value: "xid-79", Effect: resourceapi.DeviceTaintEffectNoSchedule, TimeAdded: ptr.To(metav1.NewTime(Epoch))}}
		} else {
			dn.gpus = append(dn.gpus, dev.Name)
		}
		s.Spec.Devices = append(s.Spec.Devices, dev)
	}
}

func (g *draGen) nicSlice(name string) {
	s := g.slice(name, "nic.example.com", name, 1)
	s.Spec.NodeName = ptr.To(name)
	for d := 0; d < 4; d++ {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("nic-%d", d), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"rdma": {BoolValue: ptr.To(d != 3)}, "linkSpeedGbps": intAttr(400), "resource.kubernetes.io/pcieRoot": str(fmt.Sprintf("pci0000:%02x", d*0x20)),
		}})
	}
}

// migSlices: two A100-40GB GPUs, each a counter set of 40Gi memory and 98
// multiprocessors, offered whole or as 3g.20gb / 1g.5gb partitions.
func (g *draGen) migSlices(name string) {
	counters := g.slice(name, "gpu.example.com", name, 2)
	counters.Spec.NodeName = ptr.To(name)
	devs := g.slice(name, "gpu.example.com", name, 2)
	devs.Spec.NodeName = ptr.To(name)
	for gpu := 0; gpu < 2; gpu++ {
		set := fmt.Sprintf("gpu-%d-counters", gpu)
		counters.Spec.SharedCounters = append(counters.Spec.SharedCounters, resourceapi.CounterSet{Name: set, Counters: map[string]resourceapi.Counter{
			"memory": {Value: resource.MustParse("40Gi")}, "multiprocessors": {Value: resource.MustParse("98")}}})
		add := func(dev, typ, profile, memory, sms string) {
			devs.Spec.Devices = append(devs.Spec.Devices, resourceapi.Device{
				Name: dev,
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"type": str(typ), "model": str("A100-40GB"), "profile": str(profile), "index": intAttr(int64(gpu)),
					"resource.kubernetes.io/pcieRoot": str(fmt.Sprintf("pci0000:%02x", gpu*0x20)),
				},
				Capacity:         map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(memory)}},
				ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: set, Counters: map[string]resourceapi.Counter{"memory": {Value: resource.MustParse(memory)}, "multiprocessors": {Value: resource.MustParse(sms)}}}},
			})
		}
		add(fmt.Sprintf("gpu-%d", gpu), "gpu", "full", "40Gi", "98")
		for j := 0; j < 2; j++ {
			add(fmt.Sprintf("gpu-%d-mig-3g.20gb-%d", gpu, j), "mig", "3g.20gb", "20Gi", "42")
		}
		for j := 0; j < 7; j++ {
			add(fmt.Sprintf("gpu-%d-mig-1g.5gb-%d", gpu, j), "mig", "1g.5gb", "5Gi", "14")
		}
	}
}

// vgpuSlice: one multi-allocatable device whose memory is consumed by each
// allocation (consumable capacity).
func (g *draGen) vgpuSlice(name string) {
	s := g.slice(name, "vgpu.example.com", name, 1)
	s.Spec.NodeName = ptr.To(name)
	s.Spec.Devices = []resourceapi.Device{{
		Name:                     "vgpu-0",
		AllowMultipleAllocations: ptr.To(true),
		Attributes:               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": str("L40S")},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {
			Value: resource.MustParse("48Gi"),
			RequestPolicy: &resourceapi.CapacityRequestPolicy{Default: ptr.To(resource.MustParse("8Gi")),
				ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: ptr.To(resource.MustParse("1Gi")), Step: ptr.To(resource.MustParse("1Gi"))}},
		}},
	}}
}

// fabricSlice: accelerators attached over a fabric, usable once their
// binding conditions hold.
func (g *draGen) fabricSlice(name string) {
	s := g.slice(name, "fabric.example.com", name, 1)
	s.Spec.NodeName = ptr.To(name)
	for d := 0; d < 2; d++ {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{
			Name:                     fmt.Sprintf("accel-%d", d),
			Attributes:               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"kind": str("fabric")},
			BindsToNode:              ptr.To(true),
			BindingConditions:        []string{"fabric.example.com/attached"},
			BindingFailureConditions: []string{"fabric.example.com/failed"},
		})
	}
}

// zoneFPGAs: per zone, three FPGAs reachable from every node of the zone.
func (g *draGen) zoneFPGAs() {
	for _, z := range zones {
		s := g.slice(z, "accel.example.com", z, 1)
		s.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{z}}}}}}
		for d := 0; d < 3; d++ {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("fpga-%d", d), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"family": str("agilex7")}})
		}
	}
}

// taintRules: a node's GPUs under maintenance (NoSchedule), and one device
// being drained (NoExecute).
func (g *draGen) taintRules() {
	var gpuNodes []*draNode
	for _, n := range g.nodes {
		if len(n.gpus) > 0 {
			gpuNodes = append(gpuNodes, n)
		}
	}
	if len(gpuNodes) == 0 {
		return
	}
	n := gpuNodes[g.rng.IntN(len(gpuNodes))]
	g.w.DRA.TaintRules = append(g.w.DRA.TaintRules, &resourceapi.DeviceTaintRule{
		TypeMeta:   typed(resourceV1, "DeviceTaintRule"),
		ObjectMeta: metav1.ObjectMeta{Name: "maintenance-" + n.node.Name},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To("gpu.example.com"), Pool: ptr.To(n.pool)},
			Taint:          resourceapi.DeviceTaint{Key: "example.com/maintenance", Effect: resourceapi.DeviceTaintEffectNoSchedule, TimeAdded: ptr.To(metav1.NewTime(Epoch))},
		},
	})
	n.gpus = nil
	m := gpuNodes[g.rng.IntN(len(gpuNodes))]
	if len(m.gpus) > 0 {
		d := m.gpus[len(m.gpus)-1]
		g.w.DRA.TaintRules = append(g.w.DRA.TaintRules, &resourceapi.DeviceTaintRule{
			TypeMeta:   typed(resourceV1, "DeviceTaintRule"),
			ObjectMeta: metav1.ObjectMeta{Name: "drain-" + m.node.Name + "-" + d},
			Spec: resourceapi.DeviceTaintRuleSpec{
				DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To("gpu.example.com"), Pool: ptr.To(m.pool), Device: ptr.To(d)},
				Taint:          resourceapi.DeviceTaint{Key: "example.com/drain", Effect: resourceapi.DeviceTaintEffectNoExecute, TimeAdded: ptr.To(metav1.NewTime(Epoch))},
			},
		})
		m.gpus = m.gpus[:len(m.gpus)-1]
	}
}
