package schedtest

import (
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "k8s.io/api/core/v1"
)

// PodGroupName makes the pod a member of the scheduling.k8s.io/v1beta1
// PodGroup name (spec.schedulingGroup.podGroupName).
func (p *PodWrapper) PodGroupName(name string) *PodWrapper {
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return p
}

// PodGroupWrapper builds a scheduling.k8s.io/v1beta1 PodGroup.
type PodGroupWrapper struct{ schedulingv1beta1.PodGroup }

// MakePodGroup starts a PodGroup in namespace "default" with the basic
// policy (no gang) and UID equal to its name.
func MakePodGroup(name string) *PodGroupWrapper {
	pg := &PodGroupWrapper{}
	pg.PodGroup.Name, pg.PodGroup.Namespace, pg.PodGroup.UID = name, metav1.NamespaceDefault, types.UID(name)
	pg.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	return pg
}

// Obj returns the PodGroup.
func (g *PodGroupWrapper) Obj() *schedulingv1beta1.PodGroup { return &g.PodGroup }

// Namespace sets the namespace.
func (g *PodGroupWrapper) Namespace(ns string) *PodGroupWrapper { g.PodGroup.Namespace = ns; return g }

// MinCount makes the group a gang of minCount.
func (g *PodGroupWrapper) MinCount(n int32) *PodGroupWrapper {
	g.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: n}}
	return g
}

// BasicPolicy makes the group basic (no gang).
func (g *PodGroupWrapper) BasicPolicy() *PodGroupWrapper {
	g.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}
	return g
}

// TopologyKey sets the group's one topology constraint
// (spec.schedulingConstraints.topology[0].key).
func (g *PodGroupWrapper) TopologyKey(key string) *PodGroupWrapper {
	g.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: key}}}
	return g
}
