package snapshot

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
)

// ResolvePriorities gives the pods without spec.priority (manifests
// written by hand; the API server fills it in) the priority their
// priorityClassName names, as the API server's Priority admission does:
// the class's value and, when the pod sets none, its preemptionPolicy; a
// pod without a class gets the globalDefault class's, if the dump has one.
// A class the dump lacks leaves priority 0 with one warning per pod.
//
// PodGroups (scheduling.k8s.io/v1beta1) get theirs the same way
// (ResolvePodGroupPriority).
func (c *Cluster) ResolvePriorities() {
	for _, p := range c.Pods {
		if w := ResolvePriority(p, c.PriorityClasses); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
	for _, pg := range c.Workloads.PodGroups {
		if w := ResolvePodGroupPriority(pg, c.PriorityClasses); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
}

// ResolvePodGroupPriority sets a PodGroup's spec.priority (and
// priorityClassName, when the globalDefault class gives it) as the API
// server's Priority admission does for PodGroups
// (plugin/pkg/admission/priority admitPodGroup, establishPriority): the
// class's value; without a class the globalDefault class with the lowest
// value, else 0. The scheduler reads spec.priority only (nil is 0), and
// every member's priority must equal it. A spec.priority that differs from
// the class's is kept with a warning quoting the admission's refusal; a
// class the dump lacks leaves spec.priority unset with a warning.
// spec.preemptionPolicy is left alone: admission sets it only with the
// alpha gate PodGroupPreemptionPolicy.
func ResolvePodGroupPriority(pg *schedulingv1beta1.PodGroup, classes []*schedulingv1.PriorityClass) string {
	name := pg.Spec.PriorityClassName
	// known: the dump says what admission would compute (a dump taken
	// from a cluster may leave the classes out; its PodGroups carry
	// spec.priority already).
	var value int32
	known := false
	if name == "" {
		var def *schedulingv1.PriorityClass
		for _, pc := range classes {
			if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
				def = pc
			}
		}
		if def != nil {
			name, value = def.Name, def.Value
		}
		known = def != nil || len(classes) > 0
	} else {
		for _, pc := range classes {
			if pc.Name == name {
				value, known = pc.Value, true
				break
			}
		}
		if !known {
			value, known = systemClasses[name]
		}
	}
	if pg.Spec.Priority != nil {
		if known && *pg.Spec.Priority != value {
			return fmt.Sprintf("warning: podgroup %s/%s: priority set in the pod group (%d) must match the priority computed (%d) based on the priority class set in the spec (the API server would refuse it): priority %d kept",
				pg.Namespace, pg.Name, *pg.Spec.Priority, value, *pg.Spec.Priority)
		}
		return ""
	}
	if !known && name != "" {
		return fmt.Sprintf("warning: podgroup %s/%s: priorityClassName %q is not a PriorityClass of the dump: priority 0 (the API server would refuse the pod group)",
			pg.Namespace, pg.Name, name)
	}
	pg.Spec.Priority = &value
	pg.Spec.PriorityClassName = name
	return ""
}

// ResolvePriority resolves one pod's priority from classes (see
// ResolvePriorities) and returns a warning, or "".
func ResolvePriority(p *v1.Pod, classes []*schedulingv1.PriorityClass) string {
	if p.Spec.Priority != nil {
		return ""
	}
	var class *schedulingv1.PriorityClass
	for _, pc := range classes {
		if p.Spec.PriorityClassName == "" && pc.GlobalDefault || p.Spec.PriorityClassName != "" && pc.Name == p.Spec.PriorityClassName {
			class = pc
			break
		}
	}
	if class == nil {
		if v, ok := systemClasses[p.Spec.PriorityClassName]; ok {
			p.Spec.Priority = &v
			return ""
		}
		if p.Spec.PriorityClassName != "" {
			return fmt.Sprintf("warning: pod %s/%s: priorityClassName %q is not a PriorityClass of the dump: priority 0 (the API server would refuse the pod)",
				p.Namespace, p.Name, p.Spec.PriorityClassName)
		}
		return ""
	}
	v := class.Value
	p.Spec.Priority = &v
	if p.Spec.PreemptionPolicy == nil && class.PreemptionPolicy != nil {
		pp := *class.PreemptionPolicy
		p.Spec.PreemptionPolicy = &pp
	}
	return ""
}

// systemClasses are the PriorityClasses every cluster has (kube's
// scheduling.SystemPriorityClasses), for dumps that leave them out.
var systemClasses = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}
