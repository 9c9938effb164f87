package workload

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Labels, taints and resources of the mixed cluster.
const (
	LabelPool     = "node.example.com/pool"
	LabelDisk     = "disktype"
	LabelGPU      = "nvidia.com/gpu.present"
	GPUResource   = v1.ResourceName("nvidia.com/gpu")
	TaintGPU      = "dedicated"
	TaintSpot     = "example.com/spot"
	LabelInfra    = "node-role.kubernetes.io/infra"
	labelWorker   = "node-role.kubernetes.io/worker"
	labelTemplate = "pod-template-hash"
)

var mixedZones = []string{"zone-a", "zone-b", "zone-c"}

// instance is a node shape: capacity and what the kubelet reserves.
type instance struct {
	name       string
	cpu, mem   string // capacity
	acpu, amem string // allocatable
	pods       int64
	gpus       int64
}

var (
	mLarge   = instance{"m.large", "4", "16Gi", "3900m", "15465Mi", 58, 0}
	mXlarge  = instance{"m.xlarge", "8", "32Gi", "7860m", "31030Mi", 110, 0}
	c2xlarge = instance{"c.2xlarge", "16", "32Gi", "15780m", "31030Mi", 110, 0}
	r2xlarge = instance{"r.2xlarge", "8", "64Gi", "7860m", "62160Mi", 110, 0}
	m4xlarge = instance{"m.4xlarge", "32", "128Gi", "31620m", "124419Mi", 250, 0}
	gXlarge  = instance{"g.2xlarge", "16", "64Gi", "15780m", "62160Mi", 110, 4}
)

// nodeClass is one kind of node and its share of the cluster, in percent.
type nodeClass struct {
	share int
	pool  string
	inst  []instance
	arm   bool
	taint *v1.Taint
}

var nodeClasses = []nodeClass{
	{share: 40, pool: "general", inst: []instance{mXlarge, mXlarge, mLarge, m4xlarge}},
	{share: 15, pool: "compute", inst: []instance{c2xlarge}},
	{share: 14, pool: "memory", inst: []instance{r2xlarge, m4xlarge}},
	{share: 14, pool: "batch", inst: []instance{mLarge, mXlarge}, taint: &v1.Taint{Key: TaintSpot, Value: "true", Effect: v1.TaintEffectPreferNoSchedule}},
	{share: 5, pool: "general", inst: []instance{mXlarge}, arm: true, taint: &v1.Taint{Key: v1.LabelArchStable, Value: "arm64", Effect: v1.TaintEffectNoSchedule}},
	{share: 4, pool: "gpu", inst: []instance{gXlarge}, taint: &v1.Taint{Key: TaintGPU, Value: "gpu", Effect: v1.TaintEffectNoSchedule}},
	{share: 8, pool: "general", inst: []instance{mXlarge, mLarge}},
}

// mixedNode is a generated node and its remaining room, for binding the
// running pods.
type mixedNode struct {
	node      *v1.Node
	pool      string
	zone      string
	ssd, arm  bool
	gpuNode   bool
	cordoned  bool
	infra     bool
	cpu, mem  int64 // free millicores, bytes
	gpu, pods int64
	ports     map[int32]bool
	apps      map[*app]bool
}

// app is a Deployment-like group of identical pods.
type app struct {
	name, ns, hash string
	priority       int32
	cpu, mem, gpu  int64 // millicores, bytes, devices
	ephemeral      int64
	image          string
	pools          []string // required node affinity on the pool
	preferPool     string
	preferWeight   int32
	ssd            bool
	multiArch      bool
	tolerateGPU    bool
	tolerateSpot   bool
	infra          bool
	hostPort       int32
	antiHost       bool // required anti-affinity to itself per host
	preferAntiHost bool
	affinityTo     *app // required pod affinity per zone
	preferNear     *app // preferred pod affinity per host
	spreadZone     v1.UnsatisfiableConstraintAction
	matchLabelKeys bool
	spreadHost     bool
	initCPU        int64
	sidecar        bool
	overhead       bool
	service        bool
	zones          map[string]int // running pods per zone
}

var mixedNamespaces = []string{"default", "web", "team-a", "team-b", "batch", "ml", "infra"}

// Mixed generates a cluster of p.Nodes nodes in three zones — general,
// compute, memory, spot batch (PreferNoSchedule), tainted arm64 and GPU
// pools, an infra node, about 1% cordoned nodes, images for ImageLocality —
// with p.RunningPerNode running pods per node on average and p.Pending
// pending pods from Deployment-like apps drawing on every feature the
// default profile scores or filters: node selectors and required/preferred
// node affinity, required/preferred pod (anti-)affinity, zone and host
// topology spread (some with matchLabelKeys), host ports, init containers,
// restartable sidecars, pod overhead, ephemeral storage, GPUs, tolerations,
// priorities and Services (default spreading). A few percent of the pending
// pods cannot fit (GPU shortage, a pool no node has). Apps number about one
// per ten nodes.
func Mixed(p MixedParams) *Workload {
	if p.Pending == 0 {
		p.Pending = p.Nodes
	}
	if p.RunningPerNode == 0 {
		p.RunningPerNode = 2
	}
	running := int(p.RunningPerNode * float64(p.Nodes))
	return mixed(fmt.Sprintf("Mixed/%dNodes_%dPods", p.Nodes, p.Pending), p.Nodes, running, p.Pending, p.Seed)
}

func mixedCase(name string, p Params) *Workload {
	return mixed(name, p.Nodes, p.InitPods, p.MeasurePods, p.Seed)
}

func mixed(name string, numNodes, numRunning, numPending int, seed uint64) *Workload {
	rng := rand.New(rand.NewPCG(seed, 0x313d))
	names := newNameGen(seed ^ 0x9e3779b97f4a7c15)
	w := &Workload{Name: name, Namespaces: namespaces(mixedNamespaces...)}
	nodes := mixedNodes(rng, numNodes)
	for _, n := range nodes {
		w.Nodes = append(w.Nodes, n.node)
	}
	apps := mixedApps(rng, max(20, min(1000, numNodes/10)))
	for _, a := range apps {
		if a.service {
			w.Services = append(w.Services, &v1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: a.ns},
				Spec: v1.ServiceSpec{
					Selector: map[string]string{"app": a.name},
					Ports:    []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP}},
				},
			})
		}
	}
	var clk clock
	// Running pods: apps drawn with weights, each bound to a random node
	// that admits it; a pod that finds none in a few tries is dropped.
	weights := make([]int, len(apps))
	total := 0
	for i, a := range apps {
		weights[i] = appWeight(a)
		total += weights[i]
	}
	pick := func() *app {
		r := rng.IntN(total)
		for i, wt := range weights {
			if r < wt {
				return apps[i]
			}
			r -= wt
		}
		return apps[len(apps)-1]
	}
	for range numRunning {
		a := pick()
		for try := 0; try < 24 && len(nodes) > 0; try++ {
			n := nodes[rng.IntN(len(nodes))]
			if !admits(n, a) {
				continue
			}
			bind(n, a)
			pod := a.pod(names, clk.next())
			pod.Spec.NodeName = n.node.Name
			pod.Status.Phase = v1.PodRunning
			w.Existing = append(w.Existing, pod)
			break
		}
	}
	// Pending pods: rollouts, a burst of one app's pods at a time.
	for len(w.Pending) < numPending {
		a := pick()
		burst := 1 + rng.IntN(8)
		for range min(burst, numPending-len(w.Pending)) {
			w.Pending = append(w.Pending, a.pod(names, clk.next()))
		}
	}
	return w
}

func appWeight(a *app) int {
	switch {
	case a.antiHost || a.hostPort != 0:
		return 2
	case a.infra:
		return 1
	}
	return 6
}

func mixedNodes(rng *rand.Rand, n int) []*mixedNode {
	nodes := make([]*mixedNode, 0, n)
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		r, c := rng.IntN(100), nodeClasses[len(nodeClasses)-1]
		for _, nc := range nodeClasses {
			if r < nc.share {
				c = nc
				break
			}
			r -= nc.share
		}
		inst := c.inst[rng.IntN(len(c.inst))]
		mn := &mixedNode{
			pool: c.pool, zone: mixedZones[i%len(mixedZones)], ssd: rng.IntN(4) != 0, arm: c.arm,
			gpuNode: inst.gpus > 0, ports: map[int32]bool{}, apps: map[*app]bool{},
		}
		if i == 7 {
			mn.pool, mn.infra = "infra", true
		} else if rng.IntN(100) == 0 {
			mn.cordoned = true
		}
		arch, disk := "amd64", "hdd"
		if mn.arm {
			arch = "arm64"
		}
		if mn.ssd {
			disk = "ssd"
		}
		labels := map[string]string{
			v1.LabelHostname: name, v1.LabelOSStable: "linux", v1.LabelArchStable: arch,
			v1.LabelTopologyZone: mn.zone, v1.LabelTopologyRegion: "region-1", v1.LabelInstanceTypeStable: inst.name,
			LabelPool: mn.pool, LabelDisk: disk, labelWorker: "",
		}
		capacity := v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(inst.cpu), v1.ResourceMemory: resource.MustParse(inst.mem),
			v1.ResourcePods: *resource.NewQuantity(inst.pods, resource.DecimalSI), v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		}
		alloc := v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(inst.acpu), v1.ResourceMemory: resource.MustParse(inst.amem),
			v1.ResourcePods: *resource.NewQuantity(inst.pods, resource.DecimalSI), v1.ResourceEphemeralStorage: resource.MustParse("90Gi"),
		}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec:       v1.NodeSpec{ProviderID: "example://" + mn.zone + "/" + name},
			Status: v1.NodeStatus{
				Capacity: capacity, Allocatable: alloc,
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
				Images:     nodeImages(rng),
			},
		}
		if mn.gpuNode {
			labels[LabelGPU] = "true"
			q := *resource.NewQuantity(inst.gpus, resource.DecimalSI)
			capacity[GPUResource], alloc[GPUResource] = q, q.DeepCopy()
		}
		if c.taint != nil {
			node.Spec.Taints = append(node.Spec.Taints, *c.taint)
		}
		if mn.infra {
			labels[LabelInfra] = ""
			node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: TaintGPU, Value: "infra", Effect: v1.TaintEffectNoSchedule})
		}
		if mn.cordoned {
			node.Spec.Unschedulable = true
			node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
		}
		mn.node = node
		mn.cpu, mn.mem, mn.gpu, mn.pods = alloc.Cpu().MilliValue(), alloc.Memory().Value(), inst.gpus, inst.pods
		nodes = append(nodes, mn)
	}
	return nodes
}

const numImages = 24

func imageName(i int) string { return fmt.Sprintf("registry.example.com/app-%02d:v%d", i, 1+i%3) }

// nodeImages lists 1–6 of the app images as present, with sizes from 50MB
// to 1.5GB, for ImageLocality.
func nodeImages(rng *rand.Rand) []v1.ContainerImage {
	n := 1 + rng.IntN(6)
	seen := map[int]bool{}
	var imgs []v1.ContainerImage
	for len(imgs) < n {
		i := rng.IntN(numImages)
		if seen[i] {
			continue
		}
		seen[i] = true
		imgs = append(imgs, v1.ContainerImage{
			Names:     []string{imageName(i), fmt.Sprintf("registry.example.com/app-%02d@sha256:%064x", i, i+1)},
			SizeBytes: int64(50+(i*61)%1450) << 20,
		})
	}
	return imgs
}

var (
	cpuChoices = []int64{50, 100, 100, 250, 250, 250, 500, 500, 1000, 1000, 2000, 4000}
	memPerCPU  = []int64{1 << 30, 2 << 30, 2 << 30, 4 << 30} // bytes per core
)

func mixedApps(rng *rand.Rand, n int) []*app {
	apps := make([]*app, 0, n)
	pct := func(p int) bool { return rng.IntN(100) < p }
	for i := range n {
		a := &app{
			name: fmt.Sprintf("app-%03d", i), ns: mixedNamespaces[rng.IntN(len(mixedNamespaces)-1)],
			hash: fmt.Sprintf("%08x", rng.Uint32()), image: imageName(rng.IntN(numImages)), zones: map[string]int{},
		}
		a.cpu = cpuChoices[rng.IntN(len(cpuChoices))]
		a.mem = max(64<<20, a.cpu*memPerCPU[rng.IntN(len(memPerCPU))]/1000)
		// The rare kinds sit at fixed positions so that even a small
		// cluster has each of them.
		switch {
		case i%25 == 3: // GPU workers
			a.ns, a.gpu, a.tolerateGPU = "ml", int64(1+rng.IntN(2)), true
			a.cpu, a.mem = 2000, 8<<30
		case i%100 == 5: // on the infra node
			a.ns, a.infra = "infra", true
		case i%50 == 11: // a pool no node has: never fits
			a.pools = []string{"reserved"}
		case pct(14): // batch on spot, preferably
			a.ns, a.tolerateSpot, a.preferPool, a.preferWeight = "batch", true, "batch", int32(20+rng.IntN(80))
		}
		if a.gpu == 0 && !a.infra && a.pools == nil {
			if pct(22) {
				a.pools = [][]string{{"general"}, {"compute"}, {"memory"}, {"general", "compute"}, {"general", "memory"}}[rng.IntN(5)]
			} else if a.preferPool == "" && pct(18) {
				a.preferPool, a.preferWeight = []string{"general", "compute", "memory"}[rng.IntN(3)], int32(1+rng.IntN(100))
			}
			a.ssd = pct(10)
			a.multiArch = pct(20)
			switch r := rng.IntN(100); {
			case r < 7:
				a.antiHost = true
			case r < 22:
				a.preferAntiHost = true
			}
			if i%16 == 9 {
				a.hostPort = int32(9000 + i)
			}
			switch r := rng.IntN(100); {
			case r < 16:
				a.spreadZone = v1.DoNotSchedule
			case r < 28:
				a.spreadZone = v1.ScheduleAnyway
			}
			a.matchLabelKeys = a.spreadZone != "" && pct(50)
			a.spreadHost = pct(8)
		}
		if len(apps) > 0 && a.gpu == 0 && !a.infra {
			if pct(4) {
				a.affinityTo = apps[rng.IntN(len(apps))]
			} else if pct(5) {
				a.preferNear = apps[rng.IntN(len(apps))]
			}
		}
		if pct(20) {
			a.initCPU = []int64{100, 500, 2000}[rng.IntN(3)]
		}
		a.sidecar = pct(7)
		a.overhead = pct(3)
		a.service = a.spreadZone == "" && pct(30)
		if pct(6) {
			a.ephemeral = int64(1+rng.IntN(4)) << 30
		}
		switch r := rng.IntN(100); {
		case r < 5:
			a.priority = 100000
		case r < 20:
			a.priority = 1000
		}
		apps = append(apps, a)
	}
	return apps
}

// effective is the pod's request as the scheduler computes it: max of the
// init container and the sum of containers and sidecars, plus overhead.
func (a *app) effective() (cpu, mem int64) {
	cpu, mem = a.cpu, a.mem
	if a.sidecar {
		cpu, mem = cpu+100, mem+128<<20
	}
	if a.initCPU > 0 {
		side := int64(0)
		if a.sidecar {
			side = 100
		}
		cpu = max(cpu, a.initCPU+side)
		mem = max(mem, 256<<20)
	}
	if a.overhead {
		cpu, mem = cpu+250, mem+160<<20
	}
	return cpu, mem
}

// admits is a simple version of the default filters, enough to bind the
// running pods where the scheduler could have put them.
func admits(n *mixedNode, a *app) bool {
	if n.cordoned || (n.gpuNode && !a.tolerateGPU) || (n.arm && !a.multiArch) || n.infra != a.infra {
		return false
	}
	if a.gpu > 0 && (!n.gpuNode || n.gpu < a.gpu) {
		return false
	}
	if len(a.pools) > 0 && !contains(a.pools, n.pool) {
		return false
	}
	if a.ssd && !n.ssd {
		return false
	}
	cpu, mem := a.effective()
	if n.cpu < cpu || n.mem < mem || n.pods < 1 {
		return false
	}
	if a.hostPort != 0 && n.ports[a.hostPort] {
		return false
	}
	if a.antiHost && n.apps[a] {
		return false
	}
	if a.affinityTo != nil && a.affinityTo.zones[n.zone] == 0 {
		return false
	}
	return true
}

func bind(n *mixedNode, a *app) {
	cpu, mem := a.effective()
	n.cpu, n.mem, n.gpu, n.pods = n.cpu-cpu, n.mem-mem, n.gpu-a.gpu, n.pods-1
	if a.hostPort != 0 {
		n.ports[a.hostPort] = true
	}
	n.apps[a] = true
	a.zones[n.zone]++
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
