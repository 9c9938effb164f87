// Package schedtest has builders for pods and nodes, and helpers that run
// plugins through their real factories, for the engine's and plugins' tests.
package schedtest

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodWrapper builds a pod fluently: MakePod("p").Req("cpu", "500m").Obj().
type PodWrapper struct{ v1.Pod }

// MakePod starts a pod in namespace "default" with one container "c0" and a
// UID derived from its name.
func MakePod(name string) *PodWrapper {
	p := &PodWrapper{}
	p.Pod.Name, p.Pod.Namespace, p.Pod.UID = name, "default", types.UID("uid-"+name)
	p.Spec.SchedulerName = v1.DefaultSchedulerName
	p.Spec.Containers = []v1.Container{{Name: "c0", Image: "pause"}}
	return p
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *v1.Pod { return &p.Pod }

// Namespace sets the namespace (the UID stays unique per namespace).
func (p *PodWrapper) Namespace(ns string) *PodWrapper {
	p.Pod.Namespace, p.Pod.UID = ns, types.UID("uid-"+ns+"-"+p.Pod.Name)
	return p
}

// UID sets the UID.
func (p *PodWrapper) UID(uid string) *PodWrapper { p.Pod.UID = types.UID(uid); return p }

// Label sets label pairs: Label("app", "web", "tier", "front").
func (p *PodWrapper) Label(kv ...string) *PodWrapper {
	if p.Pod.Labels == nil {
		p.Pod.Labels = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Pod.Labels[kv[i]] = kv[i+1]
	}
	return p
}

// LabelMap sets the labels of m (tables that share a label set by name).
func (p *PodWrapper) LabelMap(m map[string]string) *PodWrapper {
	for k, v := range m {
		p.Label(k, v)
	}
	return p
}

// Node sets spec.nodeName.
func (p *PodWrapper) Node(n string) *PodWrapper { p.Spec.NodeName = n; return p }

// Affinity sets spec.affinity (tables that share an affinity by name).
func (p *PodWrapper) Affinity(a *v1.Affinity) *PodWrapper { p.Spec.Affinity = a; return p }

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(n string) *PodWrapper { p.Spec.SchedulerName = n; return p }

// Priority sets spec.priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper { p.Spec.Priority = &v; return p }

// Created sets the creation timestamp (seconds since an arbitrary epoch).
func (p *PodWrapper) Created(sec int64) *PodWrapper {
	p.CreationTimestamp = metav1.Unix(1700000000+sec, 0)
	return p
}

// Phase sets status.phase.
func (p *PodWrapper) Phase(ph v1.PodPhase) *PodWrapper { p.Status.Phase = ph; return p }

// ResourceList parses name/quantity pairs: "cpu", "1", "memory", "1Gi".
func ResourceList(kv ...string) v1.ResourceList {
	rl := v1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		rl[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rl
}

// Req sets requests of the first container from name/quantity pairs.
func (p *PodWrapper) Req(kv ...string) *PodWrapper {
	c := &p.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
	}
	for k, v := range ResourceList(kv...) {
		c.Resources.Requests[k] = v
	}
	return p
}

// Container adds another container with the given requests.
func (p *PodWrapper) Container(name string, kv ...string) *PodWrapper {
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: name, Image: "pause", Resources: v1.ResourceRequirements{Requests: ResourceList(kv...)}})
	return p
}

// Image sets the first container's image.
func (p *PodWrapper) Image(img string) *PodWrapper { p.Spec.Containers[0].Image = img; return p }

// InitReq adds a regular init container with the given requests.
func (p *PodWrapper) InitReq(kv ...string) *PodWrapper {
	p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "init" + itoa(len(p.Spec.InitContainers)), Image: "pause", Resources: v1.ResourceRequirements{Requests: ResourceList(kv...)}})
	return p
}

// SidecarReq adds a restartable init container (sidecar) with the given requests.
func (p *PodWrapper) SidecarReq(kv ...string) *PodWrapper {
	always := v1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "sidecar" + itoa(len(p.Spec.InitContainers)), Image: "pause", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: ResourceList(kv...)}})
	return p
}

// Overhead sets spec.overhead.
func (p *PodWrapper) Overhead(kv ...string) *PodWrapper {
	p.Spec.Overhead = ResourceList(kv...)
	return p
}

// PodReq sets pod-level spec.resources.requests.
func (p *PodWrapper) PodReq(kv ...string) *PodWrapper {
	p.Spec.Resources = &v1.ResourceRequirements{Requests: ResourceList(kv...)}
	return p
}

// HostPort adds a host port to the first container.
func (p *PodWrapper) HostPort(port int32, protocol v1.Protocol, hostIP string) *PodWrapper {
	c := &p.Spec.Containers[0]
	c.Ports = append(c.Ports, v1.ContainerPort{HostPort: port, ContainerPort: port, Protocol: protocol, HostIP: hostIP})
	return p
}

// Toleration adds a toleration.
func (p *PodWrapper) Toleration(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return p
}

// NodeSelector sets a nodeSelector entry.
func (p *PodWrapper) NodeSelector(k, v string) *PodWrapper {
	if p.Spec.NodeSelector == nil {
		p.Spec.NodeSelector = map[string]string{}
	}
	p.Spec.NodeSelector[k] = v
	return p
}

func (p *PodWrapper) affinity() *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

// NodeAffinityIn adds a required node affinity term "key In values" (each
// call adds a new ORed term).
func (p *PodWrapper) NodeAffinityIn(key string, values ...string) *PodWrapper {
	a := p.affinity()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	if a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	ns := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}})
	return p
}

// PreferredNodeAffinityIn adds a preferred node affinity term.
func (p *PodWrapper) PreferredNodeAffinityIn(weight int32, key string, values ...string) *PodWrapper {
	a := p.affinity()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.PreferredSchedulingTerm{Weight: weight, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}})
	return p
}

// PodAffinity adds a required pod affinity term matching labels on topologyKey.
func (p *PodWrapper) PodAffinity(topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		v1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}})
	return p
}

// PodAntiAffinity adds a required pod anti-affinity term.
func (p *PodWrapper) PodAntiAffinity(topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		v1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}})
	return p
}

// PreferredPodAffinity adds a preferred pod affinity term.
func (p *PodWrapper) PreferredPodAffinity(weight int32, topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}})
	return p
}

// PreferredPodAntiAffinity adds a preferred pod anti-affinity term.
func (p *PodWrapper) PreferredPodAntiAffinity(weight int32, topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}})
	return p
}

// SpreadConstraint adds a topology spread constraint selecting matchLabels.
func (p *PodWrapper) SpreadConstraint(maxSkew int32, topologyKey string, when v1.UnsatisfiableConstraintAction, matchLabels map[string]string, minDomains *int32) *PodWrapper {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew: maxSkew, TopologyKey: topologyKey, WhenUnsatisfiable: when, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}, MinDomains: minDomains,
	})
	return p
}

// SchedulingGates sets spec.schedulingGates.
func (p *PodWrapper) SchedulingGates(names ...string) *PodWrapper {
	for _, n := range names {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: n})
	}
	return p
}

// PVC adds a volume backed by a claim.
func (p *PodWrapper) PVC(claim string) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: claim, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	return p
}

// NodeWrapper builds a node fluently.
type NodeWrapper struct{ v1.Node }

// MakeNode starts a Ready node with label kubernetes.io/hostname=name and
// capacity/allocatable of 110 pods.
func MakeNode(name string) *NodeWrapper {
	n := &NodeWrapper{}
	n.Name = name
	n.UID = types.UID("uid-node-" + name)
	n.Labels = map[string]string{v1.LabelHostname: name}
	n.Status.Capacity = ResourceList("pods", "110")
	n.Status.Allocatable = ResourceList("pods", "110")
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	return n
}

// ZoneNode is the node kube's topology tests build: labelled zone=zone and
// node=name, and no hostname label.
func ZoneNode(name, zone string) *NodeWrapper {
	return MakeNode(name).OnlyLabels("zone", zone, "node", name)
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *v1.Node { return &n.Node }

// Label sets a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper { n.Labels[k] = v; return n }

// OnlyLabels replaces the labels, hostname included, with the pairs, as
// kube's test nodes carry only the labels a case gives.
func (n *NodeWrapper) OnlyLabels(kv ...string) *NodeWrapper {
	n.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// Capacity sets capacity and allocatable from name/quantity pairs (pods stays
// 110 unless given).
func (n *NodeWrapper) Capacity(kv ...string) *NodeWrapper {
	for k, v := range ResourceList(kv...) {
		n.Status.Capacity[k] = v
		n.Status.Allocatable[k] = v
	}
	return n
}

// Taint adds a taint.
func (n *NodeWrapper) Taint(key, value string, effect v1.TaintEffect) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Unschedulable cordons the node.
func (n *NodeWrapper) Unschedulable() *NodeWrapper { n.Spec.Unschedulable = true; return n }

// Images adds an image of the given size with one name.
func (n *NodeWrapper) Image(name string, size int64) *NodeWrapper {
	n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{name}, SizeBytes: size})
	return n
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
