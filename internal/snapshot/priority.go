package snapshot

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// ResolvePriorities gives the pods without spec.priority (manifests
// written by hand; the API server fills it in) the priority their
// priorityClassName names, as the API server's Priority admission does:
// the class's value and, when the pod sets none, its preemptionPolicy; a
// pod without a class gets the globalDefault class's, if the dump has one.
// A class the dump lacks leaves priority 0 with one warning per pod.
func (c *Cluster) ResolvePriorities() {
	for _, p := range c.Pods {
		if w := ResolvePriority(p, c.PriorityClasses); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
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
