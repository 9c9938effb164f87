package volumerestrictions

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*VolumeRestrictions)(nil)

// ExplainFilter names what Filter found in use: each inline disk of the
// pod that a pod of the node mounts, and, for the ReadWriteOncePod claims
// PreFilter found in use, the pods using them anywhere. Preemption may
// free them, but there is no finer measure: the shortfall is 1.
func (pl *VolumeRestrictions) ExplainFilter(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return nil
	}
	var out []string
	if s.needsDiskCheck {
		for i := range pod.Spec.Volumes {
			v := &pod.Spec.Volumes[i]
			if !needsRestrictionsCheck(v) {
				continue
			}
			for _, ev := range nodeInfo.Pods {
				if isVolumeConflict(v, ev.Pod) {
					out = append(out, fmt.Sprintf("%s is in use by pod %s on this node", diskName(v), schedcore.PodName(ev.Pod)))
				}
			}
		}
	}
	if s.conflictingPVCRefCount > 0 {
		out = append(out, pl.rwopUsers(pod, s.rwopClaims)...)
	}
	if len(out) == 0 {
		return nil
	}
	return schedcore.NewFilterExplanation(1, out...)
}

// FilterShortfall is ExplainFilter's shortfall, always 1: a conflicting volume is in use or it is not.
func (pl *VolumeRestrictions) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// rwopUsers names, claim by claim in the pod's order, the other pods of
// the namespace using its ReadWriteOncePod claims, and their nodes.
func (pl *VolumeRestrictions) rwopUsers(pod *v1.Pod, claims map[string]struct{}) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		c := pod.Spec.Volumes[i].PersistentVolumeClaim
		if c == nil {
			continue
		}
		if _, ok := claims[c.ClaimName]; !ok {
			continue
		}
		for _, other := range pl.h.Snapshot().List() {
			for _, pi := range other.Pods {
				if pi.Pod.Namespace != pod.Namespace || pi.Pod.UID == pod.UID {
					continue
				}
				for j := range pi.Pod.Spec.Volumes {
					if oc := pi.Pod.Spec.Volumes[j].PersistentVolumeClaim; oc != nil && oc.ClaimName == c.ClaimName {
						out = append(out, fmt.Sprintf("claim %s/%s (ReadWriteOncePod) is in use by pod %s on node %s", pod.Namespace, c.ClaimName, schedcore.PodName(pi.Pod), other.Name()))
					}
				}
			}
		}
	}
	return out
}

// diskName names an inline disk: "GCE PD disk-1", "EBS vol-1", "iSCSI
// iqn...", "RBD pool/image".
func diskName(v *v1.Volume) string {
	switch {
	case v.GCEPersistentDisk != nil:
		return "GCE PD " + v.GCEPersistentDisk.PDName
	case v.AWSElasticBlockStore != nil:
		return "EBS " + v.AWSElasticBlockStore.VolumeID
	case v.ISCSI != nil:
		return "iSCSI " + v.ISCSI.IQN
	case v.RBD != nil:
		return "RBD " + v.RBD.RBDPool + "/" + v.RBD.RBDImage
	}
	return v.Name
}
