package workload

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The templates of scheduler_perf (test/integration/scheduler_perf/templates
// and util.go's makeBaseNode), as constants and builders.
const (
	pauseImage = "registry.k8s.io/pause:3.10.2"
	// ZoneLabel is the label the zone workloads set on nodes.
	ZoneLabel = v1.LabelTopologyZone
)

// perfNode is node-default.yaml / makeBaseNode: pods 110, cpu 4, memory
// 32Gi, Ready. The API server defaults allocatable to capacity.
func perfNode(name string) *v1.Node {
	res := v1.ResourceList{
		v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Phase:       v1.NodeRunning,
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

// perfNodes creates n nodes named prefix+random, sorted by name (the order
// the API lists them in), and labels them round-robin with zones, as
// labelNodePrepareStrategy does over that list.
func perfNodes(g *nameGen, n int, prefix string, zones ...string) []*v1.Node {
	nodes := make([]*v1.Node, n)
	for i := range nodes {
		nodes[i] = perfNode(g.next(prefix))
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if len(zones) > 0 {
		for i, nd := range nodes {
			nd.Labels[ZoneLabel] = zones[i%len(zones)]
		}
	}
	return nodes
}

// perfPod is pod-default.yaml: one pause container with requests = limits
// = cpu 100m, memory 500Mi and containerPort 80.
func perfPod(name, ns string) *v1.Pod {
	res := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi")}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.PodSpec{
			SchedulerName: v1.DefaultSchedulerName,
			Containers: []v1.Container{{
				Name: "pause", Image: pauseImage,
				Ports:     []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}},
				Resources: v1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
			}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

// template is one pod template: its generateName and what it adds to
// pod-default.
type template struct {
	prefix string
	apply  func(*v1.Pod)
}

var (
	tmplDefault = template{prefix: "pod-"}
	// pod-with-node-affinity.yaml.
	tmplNodeAffinity = template{prefix: "node-affinity-", apply: func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: ZoneLabel, Operator: v1.NodeSelectorOpIn, Values: []string{"zone1", "zone2"}}},
			}}},
		}}
	}}
	// pod-with-pod-anti-affinity.yaml.
	tmplPodAntiAffinity = template{prefix: "anti-affinity-pod-", apply: func(p *v1.Pod) {
		p.Labels = map[string]string{"color": "green"}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{podTerm("green", v1.LabelHostname)},
		}}
	}}
	// pod-with-pod-affinity.yaml.
	tmplPodAffinity = template{prefix: "affinity-pod-", apply: func(p *v1.Pod) {
		p.Labels = map[string]string{"color": "blue"}
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{podTerm("blue", ZoneLabel)},
		}}
	}}
	// pod-with-preferred-pod-affinity.yaml.
	tmplPreferredPodAffinity = template{prefix: "preferred-affinity-pod-", apply: func(p *v1.Pod) {
		p.Labels = map[string]string{"color": "red"}
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: podTerm("red", v1.LabelHostname)}},
		}}
	}}
	// pod-with-preferred-pod-anti-affinity.yaml.
	tmplPreferredPodAntiAffinity = template{prefix: "preferred-anti-affinity-pod-", apply: func(p *v1.Pod) {
		p.Labels = map[string]string{"color": "yellow"}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: podTerm("yellow", v1.LabelHostname)}},
		}}
	}}
	// pod-with-topology-spreading.yaml and its ScheduleAnyway variant.
	tmplTopologySpreading          = spreading(v1.DoNotSchedule)
	tmplPreferredTopologySpreading = spreading(v1.ScheduleAnyway)
)

// podTerm selects color=<color> in namespaces sched-1 and sched-0.
func podTerm(color, topologyKey string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": color}},
		TopologyKey:   topologyKey,
		Namespaces:    []string{"sched-1", "sched-0"},
	}
}

func spreading(when v1.UnsatisfiableConstraintAction) template {
	return template{prefix: "spreading-pod-", apply: func(p *v1.Pod) {
		p.Labels = map[string]string{"color": "blue"}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 5, TopologyKey: ZoneLabel, WhenUnsatisfiable: when,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}},
		}}
	}}
}

// perfBuilder accumulates one scheduler_perf workload.
type perfBuilder struct {
	w     *Workload
	names *nameGen
	clock clock
	next  int // round-robin position for bound pods
	ns    []string
}

func newPerf(name string, p Params) *perfBuilder {
	return &perfBuilder{w: &Workload{Name: name}, names: newNameGen(p.Seed)}
}

func (b *perfBuilder) pods(n int, ns string, t template) []*v1.Pod {
	b.ns = append(b.ns, ns)
	pods := make([]*v1.Pod, n)
	for i := range pods {
		p := perfPod(b.names.next(t.prefix), ns)
		if t.apply != nil {
			t.apply(p)
		}
		p.CreationTimestamp = b.clock.next()
		pods[i] = p
	}
	return pods
}

// existing adds n bound pods, round-robin over the nodes.
func (b *perfBuilder) existing(n int, ns string, t template) {
	for _, p := range b.pods(n, ns, t) {
		if len(b.w.Nodes) == 0 {
			break
		}
		p.Spec.NodeName = b.w.Nodes[b.next%len(b.w.Nodes)].Name
		p.Status.Phase = v1.PodRunning
		b.next++
		b.w.Existing = append(b.w.Existing, p)
	}
}

func (b *perfBuilder) pending(n int, ns string, t template) {
	b.w.Pending = append(b.w.Pending, b.pods(n, ns, t)...)
}

func (b *perfBuilder) done() *Workload {
	b.w.Namespaces = namespaces(b.ns...)
	return b.w
}

// SchedulingBasic: initNodes default nodes (makeBaseNode, "node-0-"),
// initPods pod-default in namespace-1, measurePods pod-default in
// namespace-2.
func SchedulingBasic(name string, p Params) *Workload {
	b := newPerf(name, p)
	b.w.Nodes = perfNodes(b.names, p.Nodes, "node-0-")
	b.existing(p.InitPods, "namespace-1", tmplDefault)
	b.pending(p.MeasurePods, "namespace-2", tmplDefault)
	return b.done()
}

// SchedulingNodeAffinity: node-default nodes all labelled zone zone1; init
// and measured pods are pod-with-node-affinity (zone In [zone1, zone2]).
func SchedulingNodeAffinity(name string, p Params) *Workload {
	b := newPerf(name, p)
	b.w.Nodes = perfNodes(b.names, p.Nodes, "scheduler-perf-", "zone1")
	b.existing(p.InitPods, "namespace-1", tmplNodeAffinity)
	b.pending(p.MeasurePods, "namespace-2", tmplNodeAffinity)
	return b.done()
}

// SchedulingPodAntiAffinity: default nodes; pod-with-pod-anti-affinity
// (color green, one per host across sched-0 and sched-1): init pods in
// sched-0, measured pods in sched-1.
func SchedulingPodAntiAffinity(name string, p Params) *Workload {
	b := newPerf(name, p)
	b.w.Nodes = perfNodes(b.names, p.Nodes, "node-0-")
	b.ns = append(b.ns, "sched-0", "sched-1")
	b.existing(p.InitPods, "sched-0", tmplPodAntiAffinity)
	b.pending(p.MeasurePods, "sched-1", tmplPodAntiAffinity)
	return b.done()
}

// TopologySpreading: node-default nodes over zones moon-1..3; init pods
// pod-default; measured pods pod-with-topology-spreading (color blue,
// maxSkew 5 on the zone, DoNotSchedule).
func TopologySpreading(name string, p Params) *Workload {
	return topologySpreading(name, p, tmplTopologySpreading)
}

// PreferredTopologySpreading is TopologySpreading with ScheduleAnyway.
func PreferredTopologySpreading(name string, p Params) *Workload {
	return topologySpreading(name, p, tmplPreferredTopologySpreading)
}

func topologySpreading(name string, p Params, t template) *Workload {
	b := newPerf(name, p)
	b.w.Nodes = perfNodes(b.names, p.Nodes, "scheduler-perf-", "moon-1", "moon-2", "moon-3")
	b.existing(p.InitPods, "namespace-1", tmplDefault)
	b.pending(p.MeasurePods, "namespace-2", t)
	return b.done()
}

// MixedSchedulingBasePod: node-default nodes labelled zone1; in sched-0,
// initPods each of pod-default, pod-with-pod-affinity,
// pod-with-pod-anti-affinity, pod-with-preferred-pod-affinity and
// pod-with-preferred-pod-anti-affinity; measured pods pod-default in
// namespace-7 (the op's index, as scheduler_perf names it).
func MixedSchedulingBasePod(name string, p Params) *Workload {
	b := newPerf(name, p)
	b.w.Nodes = perfNodes(b.names, p.Nodes, "scheduler-perf-", "zone1")
	for _, t := range []template{tmplDefault, tmplPodAffinity, tmplPodAntiAffinity, tmplPreferredPodAffinity, tmplPreferredPodAntiAffinity} {
		b.existing(p.InitPods, "sched-0", t)
	}
	b.pending(p.MeasurePods, "namespace-7", tmplDefault)
	return b.done()
}
