package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeSpec describes a fake node: what a kubelet would have registered.
type NodeSpec struct {
	Name string
	// Zone and Region become the topology.kubernetes.io labels when set.
	Zone, Region string
	// InstanceType becomes node.kubernetes.io/instance-type when set.
	InstanceType string
	// CPU, Memory and EphemeralStorage are capacities ("8", "32Gi");
	// allocatable is capacity less a kubelet-like reservation.
	CPU, Memory, EphemeralStorage string
	// Pods is the pod capacity; 0 means 110.
	Pods int
	// Labels are added to the well-known ones (and win over them).
	Labels map[string]string
	Taints []v1.Taint
	// Unschedulable sets spec.unschedulable (a cordoned node).
	Unschedulable bool
	// NotReady makes the Ready condition False instead of True.
	NotReady bool
}

// Node builds the Node object, status included.
func (s NodeSpec) Node() *v1.Node {
	labels := map[string]string{
		v1.LabelHostname:   s.Name,
		v1.LabelOSStable:   "linux",
		v1.LabelArchStable: "amd64",
	}
	if s.Zone != "" {
		labels[v1.LabelTopologyZone] = s.Zone
	}
	if s.Region != "" {
		labels[v1.LabelTopologyRegion] = s.Region
	}
	if s.InstanceType != "" {
		labels[v1.LabelInstanceTypeStable] = s.InstanceType
	}
	for k, v := range s.Labels {
		labels[k] = v
	}
	cpu := resource.MustParse(orDefault(s.CPU, "4"))
	mem := resource.MustParse(orDefault(s.Memory, "16Gi"))
	eph := resource.MustParse(orDefault(s.EphemeralStorage, "100Gi"))
	pods := s.Pods
	if pods == 0 {
		pods = 110
	}
	capacity := v1.ResourceList{
		v1.ResourceCPU:              cpu,
		v1.ResourceMemory:           mem,
		v1.ResourceEphemeralStorage: eph,
		v1.ResourcePods:             *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	// Allocatable as a kubelet with kube-reserved would report it: 100m CPU,
	// 5% of memory (at least 256Mi) and 10% of the disk held back.
	allocCPU := cpu.DeepCopy()
	allocCPU.Sub(resource.MustParse("100m"))
	reserve := max(mem.Value()/20, 256<<20)
	allocMem := *resource.NewQuantity(max(mem.Value()-reserve, 0), resource.BinarySI)
	allocEph := *resource.NewQuantity(eph.Value()-eph.Value()/10, resource.BinarySI)
	allocatable := v1.ResourceList{
		v1.ResourceCPU:              allocCPU,
		v1.ResourceMemory:           allocMem,
		v1.ResourceEphemeralStorage: allocEph,
		v1.ResourcePods:             capacity[v1.ResourcePods],
	}
	ready := v1.ConditionTrue
	if s.NotReady {
		ready = v1.ConditionFalse
	}
	now := metav1.Now()
	cond := func(t v1.NodeConditionType, st v1.ConditionStatus, reason string) v1.NodeCondition {
		return v1.NodeCondition{Type: t, Status: st, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels},
		Spec:       v1.NodeSpec{Taints: s.Taints, Unschedulable: s.Unschedulable},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Phase:       v1.NodeRunning,
			Conditions: []v1.NodeCondition{
				cond(v1.NodeReady, ready, "KubeletReady"),
				cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory"),
				cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure"),
				cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID"),
				cond(v1.NodeNetworkUnavailable, v1.ConditionFalse, "RouteCreated"),
			},
			Addresses: []v1.NodeAddress{{Type: v1.NodeHostName, Address: s.Name}},
			NodeInfo: v1.NodeSystemInfo{
				Architecture: "amd64", OperatingSystem: "linux",
				KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.0",
			},
		},
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// NodeSize is one machine shape for GenerateNodes.
type NodeSize struct {
	InstanceType string
	CPU, Memory  string
	// Weight is how often the shape occurs relative to the others.
	Weight int
}

// DefaultSizes are common general-purpose, compute and memory shapes, weighted
// towards the mid-size ones as in a typical fleet.
var DefaultSizes = []NodeSize{
	{InstanceType: "m5.large", CPU: "2", Memory: "8Gi", Weight: 2},
	{InstanceType: "m5.xlarge", CPU: "4", Memory: "16Gi", Weight: 4},
	{InstanceType: "m5.2xlarge", CPU: "8", Memory: "32Gi", Weight: 3},
	{InstanceType: "c5.4xlarge", CPU: "16", Memory: "32Gi", Weight: 1},
	{InstanceType: "r5.2xlarge", CPU: "8", Memory: "64Gi", Weight: 1},
}

// GenerateOptions shape GenerateNodes' output. The zero value gives nodes
// "node-0000"... in three zones of one region with DefaultSizes.
type GenerateOptions struct {
	Prefix string   // default "node-"
	Region string   // default "us-east-1"
	Zones  []string // default Region+"a", "b", "c"; nodes are spread round-robin
	Sizes  []NodeSize
	// Seed makes the size draw reproducible; the same seed gives the same nodes.
	Seed uint64
}

// GenerateNodes returns n realistic node specs: spread evenly over zones,
// shapes drawn by weight from a seeded source (deterministic).
func GenerateNodes(n int, o GenerateOptions) []NodeSpec {
	if o.Prefix == "" {
		o.Prefix = "node-"
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if len(o.Zones) == 0 {
		o.Zones = []string{o.Region + "a", o.Region + "b", o.Region + "c"}
	}
	if len(o.Sizes) == 0 {
		o.Sizes = DefaultSizes
	}
	total := 0
	for _, s := range o.Sizes {
		total += max(s.Weight, 1)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6b756265))
	specs := make([]NodeSpec, n)
	for i := range specs {
		pick := rng.IntN(total)
		size := o.Sizes[len(o.Sizes)-1]
		for _, s := range o.Sizes {
			if pick -= max(s.Weight, 1); pick < 0 {
				size = s
				break
			}
		}
		specs[i] = NodeSpec{
			Name:         fmt.Sprintf("%s%04d", o.Prefix, i),
			Zone:         o.Zones[i%len(o.Zones)],
			Region:       o.Region,
			InstanceType: size.InstanceType,
			CPU:          size.CPU,
			Memory:       size.Memory,
		}
	}
	return specs
}

// Nodes turns specs into Node objects.
func Nodes(specs []NodeSpec) []*v1.Node {
	nodes := make([]*v1.Node, len(specs))
	for i, s := range specs {
		nodes[i] = s.Node()
	}
	return nodes
}

// CreateNodes creates the nodes and then writes their status (capacity,
// allocatable, conditions) through the status subresource, as a kubelet
// would: no kubelet runs, and create ignores status. Up to 16 requests are in
// flight; the first error stops the rest and is returned.
func CreateNodes(ctx context.Context, client kubernetes.Interface, nodes []*v1.Node) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *v1.Node)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	for range min(16, len(nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				if err := createNode(ctx, client, n); err != nil {
					fail(err)
				}
			}
		}()
	}
feed:
	for _, n := range nodes {
		select {
		case work <- n:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

func createNode(ctx context.Context, client kubernetes.Interface, want *v1.Node) error {
	n := want.DeepCopy()
	n.Status = v1.NodeStatus{}
	created, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating node %s: %w", want.Name, err)
	}
	created.Status = want.Status
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting status of node %s: %w", want.Name, err)
	}
	return nil
}
