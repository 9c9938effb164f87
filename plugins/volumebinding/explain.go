package volumebinding

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/storage/volume"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*VolumeBinding)(nil)

// maxCandidates is how many PVs a bind conflict names.
const maxCandidates = 3

// ExplainFilter says, claim by claim, what the pod's volumes lack on the
// node, following Filter's checks on the claims PreFilter read: the bound
// PV's node affinity, the PV that does not exist, the provisioning already
// started elsewhere, the class that cannot provision or not here, the PVs
// of the class and why each one does not bind, the capacities that are too
// small. Volumes cannot follow the pod, so the shortfall is 1.
func (pl *VolumeBinding) ExplainFilter(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	state, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return nil
	}
	node := nodeInfo.Node()
	var out []string
	for _, pr := range pl.claimProblems(state.claims, node) {
		claim := "claim " + pr.Claim
		switch {
		case pr.Reason == ErrReasonPVNotExist:
			out = append(out, fmt.Sprintf("%s is bound to PV %s, which does not exist", claim, pr.VolumeName))
		case pr.Reason == ErrReasonNodeConflict:
			out = append(out, fmt.Sprintf("%s is bound to PV %s, whose node affinity excludes the node: %s", claim, pr.PV.Name, pvAffinityGap(pr.PV, node)))
		case pr.SelectedNode != "":
			out = append(out, fmt.Sprintf("%s is being provisioned for node %s (annotation %s)", claim, pr.SelectedNode, volume.AnnSelectedNode))
		case pr.Reason == ErrReasonNotEnoughSpace:
			out = append(out, fmt.Sprintf("%s requests %s of class %s: %s", claim, claimSize(pr.PVC), pr.ClassName, capacitiesGap(pr)))
		case pr.TopologyMismatch:
			out = append(out, fmt.Sprintf("%s: StorageClass %s provisions only where %s; %s", claim, pr.ClassName,
				topologyTerms(pr.Class.AllowedTopologies), nodeLabelsFor(node, pr.Class.AllowedTopologies)))
		default:
			what := fmt.Sprintf("%s (%s, %s, class %s)", claim, claimSize(pr.PVC), modes(pr.PVC.Spec.AccessModes), pr.ClassName)
			why := fmt.Sprintf("StorageClass %s has no provisioner (static binding only)", pr.ClassName)
			if pr.Class == nil {
				why = fmt.Sprintf("StorageClass %s does not exist", pr.ClassName)
			}
			out = append(out, fmt.Sprintf("%s: no available PV binds on this node and %s; %s", what, why, candidatesGap(pr, node)))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return schedcore.NewFilterExplanation(1, out...)
}

// FilterShortfall is ExplainFilter's shortfall, always 1: freeing room on the node cannot bind or provision a volume.
func (pl *VolumeBinding) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// candidatesGap says why each PV of the claim's class does not bind on
// the node, the ones on this node first.
func candidatesGap(pr claimProblem, node *v1.Node) string {
	if len(pr.Candidates) == 0 {
		return "the class has no PVs"
	}
	var here, elsewhere []string
	for _, pv := range pr.Candidates {
		if volume.CheckNodeAffinity(pv, node.Labels) != nil {
			elsewhere = append(elsewhere, pv.Name)
			continue
		}
		here = append(here, fmt.Sprintf("%s %s", pv.Name, pvMismatch(pr.PVC, pv)))
	}
	var parts []string
	if len(here) > maxCandidates {
		here = append(here[:maxCandidates], fmt.Sprintf("%d more", len(here)-maxCandidates))
	}
	if len(here) > 0 {
		parts = append(parts, "PVs usable on this node: "+strings.Join(here, ", "))
	} else {
		parts = append(parts, "none of its PVs is usable on this node")
	}
	if len(elsewhere) > 0 {
		parts = append(parts, fmt.Sprintf("%d PV(s) of the class are for other nodes", len(elsewhere)))
	}
	return strings.Join(parts, "; ")
}

// pvMismatch says why a PV that the node may use does not bind to the
// claim, in component-helpers' FindMatchingVolume order of checks.
func pvMismatch(pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) string {
	if ref := pv.Spec.ClaimRef; ref != nil && (ref.Namespace != pvc.Namespace || ref.Name != pvc.Name) {
		return fmt.Sprintf("(bound to %s/%s)", ref.Namespace, ref.Name)
	}
	if pv.Spec.ClaimRef == nil && pv.Status.Phase != v1.VolumeAvailable && pv.Status.Phase != "" {
		return fmt.Sprintf("(phase %s)", pv.Status.Phase)
	}
	if mode, pvMode := volumeMode(pvc.Spec.VolumeMode), volumeMode(pv.Spec.VolumeMode); mode != pvMode {
		return fmt.Sprintf("(volumeMode %s, the claim wants %s)", pvMode, mode)
	}
	if pvc.Spec.Selector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector); err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return "(labels do not match the claim's selector)"
		}
	}
	for _, m := range pvc.Spec.AccessModes {
		if !helper.HasAccessMode(pv.Spec.AccessModes, m) {
			return fmt.Sprintf("(access modes %s, the claim wants %s)", modes(pv.Spec.AccessModes), modes(pvc.Spec.AccessModes))
		}
	}
	size := pv.Spec.Capacity[v1.ResourceStorage]
	if want := pvc.Spec.Resources.Requests[v1.ResourceStorage]; size.Cmp(want) < 0 {
		return fmt.Sprintf("(%s, too small)", size.String())
	}
	return "(taken by another claim of the pod)"
}

func volumeMode(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
	if m == nil {
		return v1.PersistentVolumeFilesystem
	}
	return *m
}

func modes(ms []v1.PersistentVolumeAccessMode) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, ",")
}

func claimSize(pvc *v1.PersistentVolumeClaim) string {
	q := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	return q.String()
}

// capacitiesGap lists the class's capacities reaching the node.
func capacitiesGap(pr claimProblem) string {
	if len(pr.Capacities) == 0 {
		return "no CSIStorageCapacity of the class covers this node"
	}
	var cs []string
	for _, c := range pr.Capacities {
		s := c.Name + " " + quantity(c.Capacity)
		if c.MaximumVolumeSize != nil {
			s += ", maximum volume size " + quantity(c.MaximumVolumeSize)
		}
		cs = append(cs, s)
	}
	return "the CSIStorageCapacities covering this node have less: " + strings.Join(cs, "; ")
}

func quantity(q *resource.Quantity) string {
	if q == nil {
		return "none"
	}
	return q.String()
}

// pvAffinityGap names the PV's node affinity term the node fails (the
// terms are ORed: each term's first failing requirement).
func pvAffinityGap(pv *v1.PersistentVolume, node *v1.Node) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return "no required node affinity"
	}
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	var gaps []string
	for i := range terms {
		if gap := helper.NodeSelectorTermGap(&terms[i], node); gap != "" {
			if len(terms) > 1 {
				gap = fmt.Sprintf("term %d: %s", i+1, gap)
			}
			gaps = append(gaps, gap)
		}
	}
	return strings.Join(gaps, "; ")
}

// topologyTerms renders allowedTopologies: "topology.kubernetes.io/zone
// in (zone-a, zone-b)", terms joined with " or ".
func topologyTerms(terms []v1.TopologySelectorTerm) string {
	var ts []string
	for _, t := range terms {
		var rs []string
		for _, r := range t.MatchLabelExpressions {
			rs = append(rs, fmt.Sprintf("%s in (%s)", r.Key, strings.Join(r.Values, ", ")))
		}
		ts = append(ts, strings.Join(rs, " and "))
	}
	return strings.Join(ts, " or ")
}

// nodeLabelsFor says what the node has of the terms' keys.
func nodeLabelsFor(node *v1.Node, terms []v1.TopologySelectorTerm) string {
	seen := map[string]bool{}
	var has []string
	for _, t := range terms {
		for _, r := range t.MatchLabelExpressions {
			if seen[r.Key] {
				continue
			}
			seen[r.Key] = true
			if v, ok := node.Labels[r.Key]; ok {
				has = append(has, fmt.Sprintf("%s=%s", r.Key, v))
			} else {
				has = append(has, "no "+r.Key+" label")
			}
		}
	}
	return "node has " + strings.Join(has, ", ")
}
