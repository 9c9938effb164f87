package workload

import "github.com/kubectl-sched/kubectl-sched/internal/snapshot"

// Cluster is the workload as a loaded snapshot (what gensnap writes, read
// back): its namespaces, nodes, services, running then pending pods, and
// its DRA objects, if any.
func (w *Workload) Cluster() *snapshot.Cluster {
	cl := &snapshot.Cluster{Namespaces: w.Namespaces, Nodes: w.Nodes, Services: w.Services}
	cl.Pods = append(append(cl.Pods, w.Existing...), w.Pending...)
	if d := w.DRA; d != nil {
		cl.DRA = snapshot.DRA{DeviceClasses: d.Classes, ResourceSlices: d.Slices, DeviceTaintRules: d.TaintRules, ResourceClaimTemplates: d.Templates, ResourceClaims: d.Claims}
	}
	return cl
}
