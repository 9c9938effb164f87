package volumebinding

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/storage/volume"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// claimProblem is, for ExplainFilter, one claim of the pod behind a Filter
// reason on a node, with what the reason is about.
type claimProblem struct {
	// Claim is the claim's "namespace/name".
	Claim string
	// PVC is the claim (its assumed version, if any).
	PVC *v1.PersistentVolumeClaim
	// Reason is the Filter reason it causes: ErrReasonNodeConflict,
	// ErrReasonPVNotExist, ErrReasonBindConflict or ErrReasonNotEnoughSpace.
	Reason string
	// PV is the bound PV (ErrReasonNodeConflict, translated to CSI when
	// migrated); VolumeName the missing one (ErrReasonPVNotExist).
	PV         *v1.PersistentVolume
	VolumeName string
	// SelectedNode is set (ErrReasonBindConflict) when the claim is being
	// provisioned for another node.
	SelectedNode string
	// Class is the claim's StorageClass (nil when it has none or it is
	// missing) and ClassName its name.
	Class     *storagev1.StorageClass
	ClassName string
	// CannotProvision (ErrReasonBindConflict): the class has no
	// provisioner (static binding only); TopologyMismatch: its
	// allowedTopologies exclude the node.
	CannotProvision, TopologyMismatch bool
	// Candidates (ErrReasonBindConflict) are the class's PVs, none of which
	// the claim can bind to on the node, by name.
	Candidates []*v1.PersistentVolume
	// Capacities (ErrReasonNotEnoughSpace) are the class's
	// CSIStorageCapacities that reach the node, by name.
	Capacities []*storagev1.CSIStorageCapacity
}

// claimProblems returns, claim by claim, why the pod's claims (as PreFilter
// read them) do not fit on the node, following Filter's checks (kube's
// FindPodVolumes); nil when they fit. It allocates; it is for ExplainFilter,
// not a scheduling cycle.
func (pl *VolumeBinding) claimProblems(claims *podVolumeClaims, node *v1.Node) []claimProblem {
	if claims == nil {
		return nil
	}
	s := pl.h.Snapshot().StorageLister()
	var out []claimProblem
	csiNode := s.CSINode(node.Name)
	for _, c := range claims.bound {
		if c.pv == nil {
			out = append(out, claimProblem{Claim: c.pvc.Namespace + "/" + c.pvc.Name, PVC: c.pvc, Reason: ErrReasonPVNotExist, VolumeName: c.pvc.Spec.VolumeName})
			break // checkBoundClaims stops at the first problem
		}
		pv, err := pl.tryTranslatePVToCSI(pl.h.Logger(), c.pv, csiNode)
		if err != nil {
			continue
		}
		if volume.CheckNodeAffinity(pv, node.Labels) != nil {
			out = append(out, claimProblem{Claim: c.pvc.Namespace + "/" + c.pvc.Name, PVC: c.pvc, Reason: ErrReasonNodeConflict, PV: pv})
			break
		}
	}
	// As findPodVolumes: a claim provisioned for another node ends the
	// check; claims without a PV go to provisioning, which stops at the
	// first claim it cannot provision.
	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, pvc := range claims.unboundDelayBinding {
		if selected, ok := pvc.Annotations[volume.AnnSelectedNode]; ok {
			if selected != node.Name {
				p := pl.problem(s, pvc, ErrReasonBindConflict)
				p.SelectedNode = selected
				return append(out, p)
			}
			toProvision = append(toProvision, pvc)
		} else {
			toMatch = append(toMatch, pvc)
		}
	}
	sort.SliceStable(toMatch, func(i, j int) bool {
		a, b := toMatch[i].Spec.Resources.Requests[v1.ResourceStorage], toMatch[j].Spec.Resources.Requests[v1.ResourceStorage]
		return a.Cmp(b) < 0
	})
	chosen := map[string]*v1.PersistentVolume{}
	for _, pvc := range toMatch {
		pv, err := volume.FindMatchingVolume(pvc, claims.unboundVolumesDelayBinding[volume.GetPersistentVolumeClaimClass(pvc)], node, chosen, true, true)
		if err != nil {
			return out
		}
		if pv == nil {
			toProvision = append(toProvision, pvc)
			continue
		}
		chosen[pv.Name] = pv
	}
	for _, pvc := range toProvision {
		p := pl.problem(s, pvc, ErrReasonBindConflict)
		if _, ok := pvc.Annotations[volume.AnnSelectedNode]; !ok {
			p.Candidates = claims.unboundVolumesDelayBinding[p.ClassName]
		}
		switch class := p.Class; {
		case class == nil:
			return out // kube's Filter errors
		case class.Provisioner == "" || class.Provisioner == volume.NotSupportedProvisioner:
			p.CannotProvision = true
		case !helper.MatchTopologySelectorTerms(class.AllowedTopologies, labels.Set(node.Labels)):
			p.TopologyMismatch = true
		default:
			ok, _, err := hasEnoughCapacity(pl.h.Logger(), s, class.Provisioner, pvc, class, node)
			if err != nil || ok {
				continue
			}
			p.Reason, p.Candidates = ErrReasonNotEnoughSpace, nil
			for _, c := range s.CSIStorageCapacities() {
				if c.StorageClassName == class.Name && nodeHasAccess(pl.h.Logger(), node, c) {
					p.Capacities = append(p.Capacities, c)
				}
			}
			sort.Slice(p.Capacities, func(i, j int) bool { return p.Capacities[i].Name < p.Capacities[j].Name })
		}
		return append(out, p)
	}
	return out
}

func (pl *VolumeBinding) problem(s schedcore.StorageLister, pvc *v1.PersistentVolumeClaim, reason string) claimProblem {
	className := volume.GetPersistentVolumeClaimClass(pvc)
	return claimProblem{Claim: pvc.Namespace + "/" + pvc.Name, PVC: pvc, Reason: reason, ClassName: className, Class: s.StorageClass(className)}
}
