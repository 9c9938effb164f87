// Package gang generates GPU clusters with workload groups of kube's
// Workload API (scheduling.k8s.io/v1beta1 Workloads and PodGroups, pods
// joined by spec.schedulingGroup.podGroupName), the references of
// hack/kubebench's -gang mode: kube-scheduler v1.37.2's own loop with the
// GenericWorkload gate (and, for Topology clusters,
// TopologyAwareWorkloadScheduling) on.
//
// A cluster is racks of 8 GPU nodes (8 nvidia.com/gpu, 96 cpu each) over
// three zones, labelled with their rack (RackLabel) and zone. Two shapes:
//
//   - Mixed (Topology false): running filler pods leave part of the GPUs
//     free; running low-priority gangs (priority 10) with disruptionMode
//     All or Single are preemption victims; pending are gangs that fit, a
//     gang that cannot fit whole (no member may bind), a gang whose
//     minCount is below its size, a basic group, and high-priority gangs
//     (priority 1000) that need preemption. Clusters of more than 100
//     nodes get no preemption (kube's candidate scan then starts at a
//     random offset).
//   - Topology: each gang asks for one rack (schedulingConstraints.topology
//     on RackLabel), every pod a whole node. Racks are pre-filled so that,
//     in queue order, exactly one rack can hold each gang (kube breaks
//     ties between placements at random), and one gang fits only across
//     racks (kube binds none of it).
//
// Deterministic: the same parameters give the same objects.
package gang

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Labels and resources of the generated nodes.
const (
	RackLabel = "example.com/rack"
	ZoneLabel = "topology.kubernetes.io/zone"
	GPU       = v1.ResourceName("nvidia.com/gpu")
	// Namespace holds every generated object that has one.
	Namespace = "train"
	// NodesPerRack is the size of a full rack.
	NodesPerRack = 8
	gpusPerNode  = 8
)

// Priorities of the generated groups.
const (
	LowPriority  = 10
	MidPriority  = 100
	HighPriority = 1000
)

// Epoch is the creationTimestamp of the first generated object.
var Epoch = time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)

// ErrParams marks parameters out of range.
var ErrParams = errors.New("invalid gang cluster parameters")

// Params size a cluster.
type Params struct {
	// Nodes is the node count, 16 to 1000.
	Nodes int
	// Seed drives every random choice.
	Seed uint64
	// Topology makes the topology shape (see the package doc).
	Topology bool
}

// Cluster is one generated cluster.
type Cluster struct {
	Name       string
	Namespaces []*v1.Namespace
	Nodes      []*v1.Node
	Workloads  []*schedulingv1beta1.Workload
	PodGroups  []*schedulingv1beta1.PodGroup
	// Running pods are bound; Pending pods have no node.
	Running, Pending []*v1.Pod
}

// Objects lists the cluster in the order a dump lists it.
func (c *Cluster) Objects() []runtime.Object {
	var out []runtime.Object
	for _, o := range c.Namespaces {
		out = append(out, o)
	}
	for _, o := range c.Nodes {
		out = append(out, o)
	}
	for _, o := range c.Workloads {
		out = append(out, o)
	}
	for _, o := range c.PodGroups {
		out = append(out, o)
	}
	for _, o := range c.Running {
		out = append(out, o)
	}
	for _, o := range c.Pending {
		out = append(out, o)
	}
	return out
}

// gen is one generation in progress.
type gen struct {
	c     *Cluster
	rng   *rand.Rand
	clock int
	// free GPUs per node, by index into c.Nodes.
	free []int
}

// Generate makes a cluster.
func Generate(p Params) (*Cluster, error) {
	if p.Nodes < 16 || p.Nodes > 1000 {
		return nil, fmt.Errorf("%w: nodes %d: want 16 to 1000", ErrParams, p.Nodes)
	}
	shape := "mixed"
	if p.Topology {
		shape = "topology"
	}
	g := &gen{
		c:   &Cluster{Name: fmt.Sprintf("gang-%s/%dnodes-seed%d", shape, p.Nodes, p.Seed)},
		rng: rand.New(rand.NewPCG(p.Seed, 0x9a96)),
	}
	g.c.Namespaces = []*v1.Namespace{{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: Namespace}}}
	g.nodes(p.Nodes)
	if p.Topology {
		g.topology()
	} else {
		g.mixed(p.Nodes <= 100)
	}
	return g.c, nil
}

func (g *gen) now() metav1.Time {
	t := metav1.NewTime(Epoch.Add(time.Duration(g.clock) * time.Second))
	g.clock++
	return t
}

func (g *gen) nodes(n int) {
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i := range n {
		rack := i / NodesPerRack
		name := fmt.Sprintf("gpu-r%02d-n%d", rack, i%NodesPerRack)
		g.c.Nodes = append(g.c.Nodes, &v1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				"kubernetes.io/hostname": name,
				RackLabel:                fmt.Sprintf("rack-%02d", rack),
				ZoneLabel:                zones[rack%len(zones)],
			}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("96"),
				v1.ResourceMemory: resource.MustParse("768Gi"),
				v1.ResourcePods:   resource.MustParse("110"),
				GPU:               *resource.NewQuantity(gpusPerNode, resource.DecimalSI),
			}},
		})
		g.free = append(g.free, gpusPerNode)
	}
}

// pod makes a pod of gpus GPUs (and 4 cpu, 32Gi per GPU, 1 cpu without).
func (g *gen) pod(name string, gpus int, priority int32, group string) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("4Gi")}
	lim := v1.ResourceList{}
	if gpus > 0 {
		req = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewQuantity(int64(4*gpus), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(int64(32*gpus)<<30, resource.BinarySI),
			GPU:               *resource.NewQuantity(int64(gpus), resource.DecimalSI),
		}
		lim = v1.ResourceList{GPU: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
	}
	p := &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, CreationTimestamp: g.now(),
			UID: types.UID("gang-" + name)},
		Spec: v1.PodSpec{
			Containers:                    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}},
			Priority:                      ptr.To(priority),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	if len(lim) == 0 {
		p.Spec.Containers[0].Resources.Limits = nil
	}
	if group != "" {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
	}
	return p
}

// bind places p on node i, running, started at its creation time.
func (g *gen) bind(p *v1.Pod, i, gpus int) {
	p.Spec.NodeName = g.c.Nodes[i].Name
	start := p.CreationTimestamp
	p.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &start,
		Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}}
	g.free[i] -= gpus
	g.c.Running = append(g.c.Running, p)
}

// group is a pending or running group of pods.
type group struct {
	name        string
	size, gpus  int
	minCount    int32 // 0: basic policy
	priority    int32
	disruptAll  bool
	topologyKey string
}

// podGroup adds the group's Workload (one template) and PodGroup.
func (g *gen) podGroup(gr group) {
	policy := schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}
	if gr.minCount > 0 {
		policy = schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: gr.minCount}}
	}
	mode := &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	if gr.disruptAll {
		mode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	}
	var constraints *schedulingv1beta1.PodGroupSchedulingConstraints
	if gr.topologyKey != "" {
		constraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: gr.topologyKey}}}
	}
	created := g.now()
	tmpl := schedulingv1beta1.PodGroupTemplate{Name: "workers", SchedulingPolicy: policy, SchedulingConstraints: constraints, DisruptionMode: mode}
	g.c.Workloads = append(g.c.Workloads, &schedulingv1beta1.Workload{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "Workload"},
		ObjectMeta: metav1.ObjectMeta{Name: gr.name, Namespace: Namespace, CreationTimestamp: created, UID: types.UID("workload-" + gr.name)},
		Spec:       schedulingv1beta1.WorkloadSpec{PodGroupTemplates: []schedulingv1beta1.PodGroupTemplate{tmpl}},
	})
	g.c.PodGroups = append(g.c.PodGroups, &schedulingv1beta1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: gr.name, Namespace: Namespace, CreationTimestamp: created, UID: types.UID("podgroup-" + gr.name)},
		Spec: schedulingv1beta1.PodGroupSpec{
			WorkloadRef:           &schedulingv1beta1.WorkloadReference{WorkloadName: gr.name, TemplateName: "workers"},
			SchedulingPolicy:      policy,
			SchedulingConstraints: constraints,
			DisruptionMode:        mode,
			Priority:              ptr.To(gr.priority),
		},
	})
}

// pending adds a pending group: its objects and pods.
func (g *gen) pending(gr group) {
	g.podGroup(gr)
	for i := range gr.size {
		g.c.Pending = append(g.c.Pending, g.pod(fmt.Sprintf("%s-%d", gr.name, i), gr.gpus, gr.priority, gr.name))
	}
}

// fill binds single filler pods of priority prio until node i has at
// most keep GPUs free.
func (g *gen) fill(i, keep int, prio int32) {
	for n := 0; g.free[i] > keep; n++ {
		gpus := min(g.free[i]-keep, 1<<g.rng.IntN(3)) // 1, 2 or 4
		g.bind(g.pod(fmt.Sprintf("fill-%s-%d", g.c.Nodes[i].Name, n), gpus, prio, ""), i, gpus)
	}
}

func (g *gen) freeGPUs() int {
	n := 0
	for _, f := range g.free {
		n += f
	}
	return n
}

// mixed makes the mixed shape.
func (g *gen) mixed(preempt bool) {
	nodes := len(g.c.Nodes)
	order := g.rng.Perm(nodes)
	// Running low-priority gangs of 4 pods x 4 GPUs, half All, half Single.
	victims := 0
	if preempt {
		victims = max(2, nodes/16)
	}
	next := 0
	for v := range victims {
		gr := group{name: fmt.Sprintf("low-%d", v), size: 4, gpus: 4, minCount: 4, priority: LowPriority, disruptAll: v%2 == 0}
		g.podGroup(gr)
		for m := range gr.size {
			i := order[next]
			next++
			g.bind(g.pod(fmt.Sprintf("%s-%d", gr.name, m), gr.gpus, gr.priority, gr.name), i, gr.gpus)
		}
	}
	// Fillers at MidPriority: a third of the nodes full, a third half
	// full, the rest (the victims' nodes among them) left as they are.
	for k, i := range order[next:] {
		switch k % 3 {
		case 0:
			g.fill(i, 0, MidPriority)
		case 1:
			g.fill(i, 4, MidPriority)
		}
	}
	sort.SliceStable(g.c.Running, func(a, b int) bool { return g.c.Running[a].Name < g.c.Running[b].Name })
	free := g.freeGPUs()
	// Pending, in creation (= queue, at equal priority) order.
	sizes := []int{2, 4, 8}
	gpus := []int{1, 2, 4, 8}
	budget := free / 2
	for k := 0; budget > 0; k++ {
		gr := group{name: fmt.Sprintf("fit-%d", k), size: sizes[g.rng.IntN(len(sizes))], gpus: gpus[g.rng.IntN(len(gpus))], priority: MidPriority}
		gr.minCount = int32(gr.size)
		if k == 1 {
			gr.minCount = int32(gr.size) / 2 // minCount below the size
		}
		budget -= gr.size * gr.gpus
		g.pending(gr)
	}
	// Cannot fit whole: more GPUs than are free and preemptible together.
	whole := (free+LowPriorityGPUs(victims))/gpusPerNode + 2
	g.pending(group{name: "toobig", size: whole, gpus: gpusPerNode, minCount: int32(whole), priority: MidPriority})
	g.pending(group{name: "basic", size: 3, gpus: 1, priority: MidPriority})
	if preempt {
		for h := range 2 {
			g.pending(group{name: fmt.Sprintf("high-%d", h), size: 4, gpus: 4, minCount: 4, priority: HighPriority, disruptAll: h == 0})
		}
	}
}

// LowPriorityGPUs is how many GPUs n running low-priority gangs hold.
func LowPriorityGPUs(n int) int { return n * 4 * 4 }

// topology makes the topology shape.
func (g *gen) topology() {
	nodes := len(g.c.Nodes)
	racks := (nodes + NodesPerRack - 1) / NodesPerRack
	// Open racks: distinct free whole-node counts from 2..8 (at most
	// racks of that many nodes); the other racks keep at most one node free.
	open := min(racks, 6)
	counts := g.rng.Perm(7)[:open] // 0..6 -> 2..8
	rackOrder := g.rng.Perm(racks)
	freeNodes := map[int]int{}
	for k, r := range rackOrder {
		size := min(NodesPerRack, nodes-r*NodesPerRack)
		switch {
		case k < open:
			freeNodes[r] = min(counts[k]+2, size)
		default:
			freeNodes[r] = g.rng.IntN(2)
		}
	}
	// Two open racks of one size would tie: keep the sizes distinct.
	seen := map[int]bool{}
	for _, r := range rackOrder[:open] {
		for seen[freeNodes[r]] && freeNodes[r] > 2 {
			freeNodes[r]--
		}
		if seen[freeNodes[r]] {
			freeNodes[r] = 1
		}
		seen[freeNodes[r]] = true
	}
	for i := range g.c.Nodes {
		r, n := i/NodesPerRack, i%NodesPerRack
		if n >= freeNodes[r] {
			g.fill(i, 0, MidPriority)
		}
	}
	sort.SliceStable(g.c.Running, func(a, b int) bool { return g.c.Running[a].Name < g.c.Running[b].Name })
	var want []int
	most, total := 0, 0
	for _, f := range freeNodes {
		if f >= 2 {
			want = append(want, f)
		}
		most = max(most, f)
		total += f
	}
	sort.Sort(sort.Reverse(sort.IntSlice(want)))
	// First in the queue: a gang larger than any rack's room that the
	// cluster holds across racks.
	if most+1 <= total {
		g.pending(group{name: "spread", size: most + 1, gpus: gpusPerNode, minCount: int32(most + 1), priority: MidPriority, topologyKey: RackLabel})
	}
	for k, size := range want {
		g.pending(group{name: fmt.Sprintf("rack-%d", k), size: size, gpus: gpusPerNode, minCount: int32(size), priority: MidPriority, topologyKey: RackLabel})
	}
}
