package volumebinding

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Filter reasons, word for word kube's.
const (
	// ErrReasonBindConflict: no available PV matches an unbound claim and
	// it cannot be provisioned for the node.
	ErrReasonBindConflict = "node(s) didn't find available persistent volumes to bind"
	// ErrReasonNodeConflict: a bound PV's node affinity excludes the node.
	ErrReasonNodeConflict = "node(s) didn't match PersistentVolume's node affinity"
	// ErrReasonNotEnoughSpace: no CSIStorageCapacity reachable from the
	// node has room for a claim to provision.
	ErrReasonNotEnoughSpace = "node(s) did not have enough free storage"
	// ErrReasonPVNotExist: a bound claim's PV does not exist.
	ErrReasonPVNotExist = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	// ErrReasonUnboundImmediate is PreFilter's reason for claims of
	// Immediate classes (or of no or unknown class, or pre-bound to a PV)
	// that are not bound yet: the PV controller must bind them first.
	ErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
)

// bindingInfo is a PV chosen for an unbound claim.
type bindingInfo struct {
	pvc *v1.PersistentVolumeClaim
	pv  *v1.PersistentVolume
}

// dynamicProvision is a claim to provision, with the capacity object that
// has room for it (when the driver tracks capacity).
type dynamicProvision struct {
	pvc          *v1.PersistentVolumeClaim
	nodeCapacity *storagev1.CSIStorageCapacity
}

// podVolumes is what one node needs for the pod's claims.
type podVolumes struct {
	staticBindings    []*bindingInfo
	dynamicProvisions []*dynamicProvision
}

// boundClaim is a bound claim with its PV (nil: the PV does not exist).
type boundClaim struct {
	pvc *v1.PersistentVolumeClaim
	pv  *v1.PersistentVolume
}

// podVolumeClaims sorts the pod's claims, as kube's GetPodVolumeClaims.
type podVolumeClaims struct {
	bound                      []boundClaim
	unboundDelayBinding        []*v1.PersistentVolumeClaim
	unboundImmediate           []*v1.PersistentVolumeClaim
	unboundVolumesDelayBinding map[string][]*v1.PersistentVolume
}

// claimName is the claim a volume uses ("" for none) and whether it is a
// generic ephemeral volume's.
func claimName(pod *v1.Pod, vol *v1.Volume) (string, bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

// podHasPVCs is kube's check, on the lister's claims, that every claim
// exists, is not lost and not being deleted, and that ephemeral claims
// belong to the pod. Its error messages are the PreFilter reasons.
func podHasPVCs(s schedcore.StorageLister, pod *v1.Pod) (bool, error) {
	has := false
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim == nil && vol.Ephemeral == nil {
			continue
		}
		name, isEphemeral := claimName(pod, vol)
		has = true
		pvc := s.PVC(pod.Namespace, name)
		if pvc == nil {
			if isEphemeral {
				return has, fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return has, fmt.Errorf("%s", helper.NotFoundMessage(helper.ResourcePVC, name))
		}
		if pvc.Status.Phase == v1.ClaimLost {
			return has, fmt.Errorf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
		}
		if pvc.DeletionTimestamp != nil {
			return has, fmt.Errorf("persistentvolumeclaim %q is being deleted", pvc.Name)
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return has, err
			}
		}
	}
	return has, nil
}

func isPVCFullyBound(pvc *v1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted)
}

// isDelayBindingMode is component-helpers' IsDelayBindingMode on the lister.
func isDelayBindingMode(s schedcore.StorageLister, pvc *v1.PersistentVolumeClaim) (bool, error) {
	name := volume.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return false, nil
	}
	class := s.StorageClass(name)
	if class == nil {
		return false, nil
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// getPodVolumeClaims sorts the pod's claims (assumed versions included)
// into bound, unbound delayed and unbound immediate, and lists the PVs of
// the delayed claims' classes.
func (pl *VolumeBinding) getPodVolumeClaims(s schedcore.StorageLister, pod *v1.Pod) (*podVolumeClaims, error) {
	out := &podVolumeClaims{}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, isEphemeral := claimName(pod, vol)
		if vol.PersistentVolumeClaim == nil && !isEphemeral {
			continue
		}
		pvc := pl.assumed.pvc(s, pod.Namespace, name)
		if pvc == nil {
			return out, fmt.Errorf("error getting PVC %q: persistentvolumeclaims %q not found", pod.Namespace+"/"+name, pod.Namespace+"/"+name)
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return out, err
			}
		}
		if isPVCFullyBound(pvc) {
			out.bound = append(out.bound, boundClaim{pvc: pvc, pv: pl.assumed.pv(s, pvc.Spec.VolumeName)})
			continue
		}
		delay, err := isDelayBindingMode(s, pvc)
		if err != nil {
			return out, err
		}
		if delay && pvc.Spec.VolumeName == "" {
			out.unboundDelayBinding = append(out.unboundDelayBinding, pvc)
		} else {
			out.unboundImmediate = append(out.unboundImmediate, pvc)
		}
	}
	out.unboundVolumesDelayBinding = map[string][]*v1.PersistentVolume{}
	for _, pvc := range out.unboundDelayBinding {
		class := volume.GetPersistentVolumeClaimClass(pvc)
		out.unboundVolumesDelayBinding[class] = pl.assumed.listPVs(s, class)
	}
	return out, nil
}

// findPodVolumes is kube's FindPodVolumes for one node: bound claims' PVs
// must accept the node; unbound delayed claims need an available matching
// PV or a class that can provision for the node.
func (pl *VolumeBinding) findPodVolumes(logger logr.Logger, s schedcore.StorageLister, pod *v1.Pod, claims *podVolumeClaims, node *v1.Node) (pv *podVolumes, reasons []string, err error) {
	pv = &podVolumes{}
	unboundSatisfied, boundSatisfied, sufficientStorage, boundPVsFound := true, true, true, true
	defer func() {
		if err != nil {
			return
		}
		if !boundSatisfied {
			reasons = append(reasons, ErrReasonNodeConflict)
		}
		if !unboundSatisfied {
			reasons = append(reasons, ErrReasonBindConflict)
		}
		if !sufficientStorage {
			reasons = append(reasons, ErrReasonNotEnoughSpace)
		}
		if !boundPVsFound {
			reasons = append(reasons, ErrReasonPVNotExist)
		}
	}()
	if len(claims.bound) > 0 {
		if boundSatisfied, boundPVsFound, err = pl.checkBoundClaims(logger, s, claims.bound, node); err != nil {
			return
		}
	}
	if len(claims.unboundDelayBinding) == 0 {
		return
	}
	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, c := range claims.unboundDelayBinding {
		if selected, ok := c.Annotations[volume.AnnSelectedNode]; ok {
			if selected != node.Name {
				unboundSatisfied = false
				return
			}
			toProvision = append(toProvision, c)
		} else {
			toMatch = append(toMatch, c)
		}
	}
	if len(toMatch) > 0 {
		var unmatched []*v1.PersistentVolumeClaim
		unboundSatisfied, pv.staticBindings, unmatched, err = pl.findMatchingVolumes(toMatch, claims.unboundVolumesDelayBinding, node)
		if err != nil {
			return
		}
		toProvision = append(toProvision, unmatched...)
	}
	if len(toProvision) > 0 {
		unboundSatisfied, sufficientStorage, pv.dynamicProvisions, err = pl.checkVolumeProvisions(logger, s, toProvision, node)
	}
	return
}

func (pl *VolumeBinding) checkBoundClaims(logger logr.Logger, s schedcore.StorageLister, claims []boundClaim, node *v1.Node) (bool, bool, error) {
	csiNode := s.CSINode(node.Name)
	for _, c := range claims {
		if c.pv == nil {
			return true, false, nil
		}
		pv, err := pl.tryTranslatePVToCSI(logger, c.pv, csiNode)
		if err != nil {
			return false, true, err
		}
		if err := volume.CheckNodeAffinity(pv, node.Labels); err != nil {
			return false, true, nil
		}
	}
	return true, true, nil
}

// findMatchingVolumes matches claims, smallest request first, to the
// smallest available PV that fits (component-helpers' FindMatchingVolume,
// the scheduler path). Among equal sizes kube's index order is unspecified;
// here the lowest PV name wins.
func (pl *VolumeBinding) findMatchingVolumes(claims []*v1.PersistentVolumeClaim, pvsByClass map[string][]*v1.PersistentVolume, node *v1.Node) (bool, []*bindingInfo, []*v1.PersistentVolumeClaim, error) {
	sort.SliceStable(claims, func(i, j int) bool {
		a, b := claims[i].Spec.Resources.Requests[v1.ResourceStorage], claims[j].Spec.Resources.Requests[v1.ResourceStorage]
		return a.Cmp(b) < 0
	})
	chosen := map[string]*v1.PersistentVolume{}
	found := true
	var bindings []*bindingInfo
	var unbound []*v1.PersistentVolumeClaim
	for _, pvc := range claims {
		pvs := pvsByClass[volume.GetPersistentVolumeClaimClass(pvc)]
		pv, err := volume.FindMatchingVolume(pvc, pvs, node, chosen, true, true)
		if err != nil {
			return false, nil, nil, err
		}
		if pv == nil {
			unbound = append(unbound, pvc)
			found = false
			continue
		}
		chosen[pv.Name] = pv
		bindings = append(bindings, &bindingInfo{pvc: pvc, pv: pv})
	}
	return found, bindings, unbound, nil
}

// checkVolumeProvisions: each claim's class must exist, have a provisioner
// (not kubernetes.io/no-provisioner), allow the node's topology, and, for
// CSI drivers with storageCapacity, have a CSIStorageCapacity with room.
func (pl *VolumeBinding) checkVolumeProvisions(logger logr.Logger, s schedcore.StorageLister, claims []*v1.PersistentVolumeClaim, node *v1.Node) (bool, bool, []*dynamicProvision, error) {
	var out []*dynamicProvision
	for _, claim := range claims {
		className := volume.GetPersistentVolumeClaimClass(claim)
		if className == "" {
			return false, false, nil, fmt.Errorf("no class for claim %q", claim.Namespace+"/"+claim.Name)
		}
		class := s.StorageClass(className)
		if class == nil {
			return false, false, nil, fmt.Errorf("failed to find storage class %q", className)
		}
		if class.Provisioner == "" || class.Provisioner == volume.NotSupportedProvisioner {
			return false, true, nil, nil
		}
		if !helper.MatchTopologySelectorTerms(class.AllowedTopologies, labels.Set(node.Labels)) {
			return false, true, nil, nil
		}
		ok, capacity, err := hasEnoughCapacity(logger, s, class.Provisioner, claim, class, node)
		if err != nil {
			return false, false, nil, err
		}
		if !ok {
			return true, false, nil, nil
		}
		out = append(out, &dynamicProvision{pvc: claim, nodeCapacity: capacity})
	}
	return true, true, out, nil
}

func hasEnoughCapacity(logger logr.Logger, s schedcore.StorageLister, provisioner string, claim *v1.PersistentVolumeClaim, class *storagev1.StorageClass, node *v1.Node) (bool, *storagev1.CSIStorageCapacity, error) {
	q, ok := claim.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok {
		return true, nil, nil
	}
	driver := s.CSIDriver(provisioner)
	if driver == nil || driver.Spec.StorageCapacity == nil || !*driver.Spec.StorageCapacity {
		return true, nil, nil
	}
	size := q.Value()
	for _, c := range s.CSIStorageCapacities() {
		if c.StorageClassName == class.Name && capacitySufficient(c, size) && nodeHasAccess(logger, node, c) {
			return true, c, nil
		}
	}
	return false, nil, nil
}

func capacitySufficient(c *storagev1.CSIStorageCapacity, size int64) bool {
	limit := c.Capacity
	if c.MaximumVolumeSize != nil {
		limit = c.MaximumVolumeSize
	}
	return limit != nil && limit.Value() >= size
}

func nodeHasAccess(logger logr.Logger, node *v1.Node, c *storagev1.CSIStorageCapacity) bool {
	if c.NodeTopology == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology)
	if err != nil {
		logger.Error(err, "Unexpected error converting to a label selector", "nodeTopology", c.NodeTopology)
		return false
	}
	return sel.Matches(labels.Set(node.Labels))
}

// isCSIMigrationOnForPlugin lists the in-tree plugins whose migration is on
// in v1.37.
func isCSIMigrationOnForPlugin(name string) bool {
	switch name {
	case csiplugins.AWSEBSInTreePluginName, csiplugins.GCEPDInTreePluginName, csiplugins.AzureDiskInTreePluginName,
		csiplugins.CinderInTreePluginName, csiplugins.PortworxVolumePluginName:
		return true
	}
	return false
}

// isPluginMigratedToCSIOnNode reads the CSINode's migrated-plugins
// annotation.
func isPluginMigratedToCSIOnNode(name string, csiNode *storagev1.CSINode) bool {
	if csiNode == nil {
		return false
	}
	mpa := csiNode.Annotations[v1.MigratedPluginsAnnotationKey]
	if mpa == "" {
		return false
	}
	for _, p := range strings.Split(mpa, ",") {
		if p == name {
			return true
		}
	}
	return false
}

// tryTranslatePVToCSI translates an in-tree PV to CSI (its node affinity
// becomes the driver's topology) when its plugin is migrated on the node.
func (pl *VolumeBinding) tryTranslatePVToCSI(logger logr.Logger, pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	if !pl.translator.IsPVMigratable(pv) {
		return pv, nil
	}
	name, err := pl.translator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return nil, fmt.Errorf("could not get plugin name from pv: %v", err)
	}
	if !isCSIMigrationOnForPlugin(name) || !isPluginMigratedToCSIOnNode(name, csiNode) {
		return pv, nil
	}
	t, err := pl.translator.TranslateInTreePVToCSI(logger, pv)
	if err != nil {
		return nil, fmt.Errorf("could not translate pv: %v", err)
	}
	return t, nil
}
