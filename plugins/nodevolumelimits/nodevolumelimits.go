package nodevolumelimits

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csilibplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.NodeVolumeLimits

	// ErrReasonMaxVolumeCountExceeded is the Filter reason when the node's
	// CSINode allocatable count for a driver would be exceeded.
	ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

	// unboundVolumePrefix stands for kube's random per-plugin prefix of the
	// handles given to claims not yet bound: the same claim on the new pod
	// and on a pod of the node counts once.
	unboundVolumePrefix = "kubectl-sched-unbound"
)

// ErrReasonDriverNotInstalled is the Filter reason (VolumeLimitScaling, on
// in v1.37) when a CSIDriver with preventPodSchedulingIfMissing is not on the
// node's CSINode.
func ErrReasonDriverNotInstalled(driver string) string {
	return fmt.Sprintf("%s CSI driver is not installed on the node", driver)
}

// pvcNotFoundError is a missing claim of the pod being scheduled.
type pvcNotFoundError struct{ msg string }

func (e *pvcNotFoundError) Error() string { return e.msg }

// CSILimits counts the CSI volumes attached to a node against the CSINode's
// per-driver allocatable count.
type CSILimits struct {
	h          *schedcore.Handle
	translator csitrans.CSITranslator
}

var (
	_ schedcore.PreFilterPlugin   = (*CSILimits)(nil)
	_ schedcore.FilterPlugin      = (*CSILimits)(nil)
	_ schedcore.EnqueueExtensions = (*CSILimits)(nil)
	_ schedcore.NodeLocalPlugin   = (*CSILimits)(nil)
	_ schedcore.FilterExplainer   = (*CSILimits)(nil)
)

// NodeLocal is true for pods without claims or CSI volumes: a pod
// without them attaches nothing.
func (pl *CSILimits) NodeLocal(pod *v1.Pod) bool { return helper.OnlyNodeLocalVolumes(pod) }

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &CSILimits{h: h, translator: csitrans.New()}, nil
}

// Name returns the plugin's name.
func (pl *CSILimits) Name() string { return Name }

// PreFilter skips pods without claims, generic ephemeral volumes or
// migratable in-tree inline volumes.
func (pl *CSILimits) PreFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || pl.translator.IsInlineMigratable(v) {
			return nil, nil
		}
	}
	return nil, schedcore.Skipped()
}

// Filter counts the pod's new CSI volumes per driver (in-tree volumes
// translated where the node's CSINode exists, as kube does), checks that
// opted-in drivers are installed, and that volumes of the node's pods plus
// the new ones stay within the CSINode's allocatable counts.
func (pl *CSILimits) Filter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	storage := pl.h.Snapshot().StorageLister()
	node := nodeInfo.Node()
	csiNode := storage.CSINode(node.Name)
	logger := pl.h.Logger()

	newVolumes := map[string]string{}
	if err := pl.filterAttachableVolumes(logger, storage, pod, csiNode, true, newVolumes); err != nil {
		var nf *pvcNotFoundError
		if errors.As(err, &nf) {
			return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, err.Error())
		}
		return schedcore.AsStatus(err)
	}
	if len(newVolumes) == 0 {
		return nil
	}
	for _, driver := range newVolumes {
		if !checkCSIDriverOnNode(storage, driver, csiNode) {
			return schedcore.NewStatus(schedcore.Unschedulable, ErrReasonDriverNotInstalled(driver))
		}
	}
	limits := getVolumeLimits(csiNode)
	if len(limits) == 0 {
		return nil
	}
	attached := map[string]string{}
	for _, ep := range nodeInfo.Pods {
		if err := pl.filterAttachableVolumes(logger, storage, ep.Pod, csiNode, false, attached); err != nil {
			return schedcore.AsStatus(err)
		}
	}
	attachedCount := map[string]int{}
	for unique, driver := range attached {
		delete(newVolumes, unique)
		attachedCount[driver]++
	}
	// VolumeAttachments are not part of the snapshot; kube also counts the
	// node's VolumeAttachments of CSI PVs that no pod there uses.
	newCount := map[string]int{}
	for _, driver := range newVolumes {
		newCount[driver]++
	}
	for driver, count := range newCount {
		if max, ok := limits[driver]; ok && attachedCount[driver]+count > int(max) {
			return schedcore.NewStatus(schedcore.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// checkCSIDriverOnNode: a driver without a CSIDriver object, or one that
// does not set preventPodSchedulingIfMissing, counts as installed.
func checkCSIDriverOnNode(storage schedcore.StorageLister, driver string, csiNode *storagev1.CSINode) bool {
	d := storage.CSIDriver(driver)
	if d == nil || d.Spec.PreventPodSchedulingIfMissing == nil || !*d.Spec.PreventPodSchedulingIfMissing {
		return true
	}
	if csiNode == nil {
		return false
	}
	for _, nd := range csiNode.Spec.Drivers {
		if nd.Name == driver {
			return true
		}
	}
	return false
}

func getVolumeLimits(csiNode *storagev1.CSINode) map[string]int64 {
	out := map[string]int64{}
	if csiNode == nil {
		return out
	}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			out[d.Name] = int64(*d.Allocatable.Count)
		}
	}
	return out
}

// filterAttachableVolumes adds the pod's attachable volumes to result as
// "driver/handle" -> driver.
func (pl *CSILimits) filterAttachableVolumes(logger logr.Logger, storage schedcore.StorageLister, pod *v1.Pod, csiNode *storagev1.CSINode, newPod bool, result map[string]string) error {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var pvcName string
		isEphemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			pvcName = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			pvcName = ephemeral.VolumeClaimName(pod, vol)
			isEphemeral = true
		default:
			if err := pl.checkAttachableInlineVolume(vol, csiNode, pod, result); err != nil {
				return err
			}
			continue
		}
		if pvcName == "" {
			return fmt.Errorf("PersistentVolumeClaim had no name")
		}
		pvc := storage.PVC(pod.Namespace, pvcName)
		if pvc == nil {
			if newPod {
				return &pvcNotFoundError{fmt.Sprintf("looking up PVC %s/%s: %s", pod.Namespace, pvcName, helper.NotFoundMessage(helper.ResourcePVC, pvcName))}
			}
			continue
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return err
			}
		}
		driver, handle := pl.getCSIDriverInfo(logger, storage, csiNode, pvc)
		if driver == "" || handle == "" {
			continue
		}
		result[driver+"/"+handle] = driver
	}
	return nil
}

func (pl *CSILimits) checkAttachableInlineVolume(vol *v1.Volume, csiNode *storagev1.CSINode, pod *v1.Pod, result map[string]string) error {
	if !pl.translator.IsInlineMigratable(vol) {
		return nil
	}
	inTree, err := pl.translator.GetInTreePluginNameFromSpec(nil, vol)
	if err != nil {
		return fmt.Errorf("looking up provisioner name for volume %s: %w", vol.Name, err)
	}
	if !isCSIMigrationOn(csiNode, inTree) {
		return nil
	}
	pv, err := pl.translator.TranslateInTreeInlineVolumeToCSI(pl.h.Logger(), vol, pod.Namespace)
	if err != nil || pv == nil {
		return fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)
	}
	driver, err := pl.translator.GetCSINameFromInTreeName(inTree)
	if err != nil {
		return fmt.Errorf("looking up CSI driver name for provisioner %s: %w", inTree, err)
	}
	if pv.Spec.CSI == nil {
		return nil
	}
	result[driver+"/"+pv.Spec.CSI.VolumeHandle] = driver
	return nil
}

// getCSIDriverInfo returns the driver and volume handle of a claim: from
// its PV (translated when in-tree and migrated), else from its
// StorageClass's provisioner with a per-claim handle.
func (pl *CSILimits) getCSIDriverInfo(logger logr.Logger, storage schedcore.StorageLister, csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	if pvc.Spec.VolumeName == "" {
		return pl.getCSIDriverInfoFromSC(storage, csiNode, pvc)
	}
	pv := storage.PV(pvc.Spec.VolumeName)
	if pv == nil {
		return pl.getCSIDriverInfoFromSC(storage, csiNode, pvc)
	}
	src := pv.Spec.CSI
	if src == nil {
		if !pl.translator.IsPVMigratable(pv) {
			return "", ""
		}
		plugin, err := pl.translator.GetInTreePluginNameFromSpec(pv, nil)
		if err != nil || !isCSIMigrationOn(csiNode, plugin) {
			return "", ""
		}
		csiPV, err := pl.translator.TranslateInTreePVToCSI(logger, pv)
		if err != nil || csiPV.Spec.CSI == nil {
			return "", ""
		}
		src = csiPV.Spec.CSI
	}
	return src.Driver, src.VolumeHandle
}

func (pl *CSILimits) getCSIDriverInfoFromSC(storage schedcore.StorageLister, csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	scName := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if scName == "" {
		return "", ""
	}
	sc := storage.StorageClass(scName)
	if sc == nil {
		return "", ""
	}
	handle := unboundVolumePrefix + "-" + pvc.Namespace + "/" + pvc.Name
	if pl.translator.IsMigratableIntreePluginByName(sc.Provisioner) {
		if !isCSIMigrationOn(csiNode, sc.Provisioner) {
			return "", ""
		}
		driver, err := pl.translator.GetCSINameFromInTreeName(sc.Provisioner)
		if err != nil {
			return "", ""
		}
		return driver, handle
	}
	return sc.Provisioner, handle
}

// isCSIMigrationOn is kube's nodevolumelimits check: migration counts as on
// for the AWS EBS, Portworx, GCE PD, Azure Disk and Cinder plugins whenever
// the node has a CSINode.
func isCSIMigrationOn(csiNode *storagev1.CSINode, plugin string) bool {
	if csiNode == nil || plugin == "" {
		return false
	}
	switch plugin {
	case csilibplugins.AWSEBSInTreePluginName, csilibplugins.PortworxVolumePluginName, csilibplugins.GCEPDInTreePluginName,
		csilibplugins.AzureDiskInTreePluginName, csilibplugins.CinderInTreePluginName:
		return true
	}
	return false
}

// EventsToRegister: a CSINode added, or updated with a higher limit; an
// assigned pod with volumes deleted; one of the pod's claims added.
// (kube also registers VolumeAttachment deletions, which the snapshot does
// not carry.)
func (pl *CSILimits) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.CSINode, ActionType: schedcore.Add}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.CSINode, ActionType: schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterCSINodeUpdated},
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterAssignedPodDeleted},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterPVCAdded},
		{Event: schedcore.ClusterEvent{Resource: schedcore.VolumeAttachment, ActionType: schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterVolumeAttachmentDeleted},
	}, nil
}

func (pl *CSILimits) isSchedulableAfterAssignedPodDeleted(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	deleted, _, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterAssignedPodDeleted: %w", err)
	}
	if len(deleted.Spec.Volumes) == 0 || deleted.Spec.NodeName == "" && deleted.Status.NominatedNodeName == "" {
		return schedcore.QueueSkip, nil
	}
	for i := range deleted.Spec.Volumes {
		v := &deleted.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || pl.translator.IsInlineMigratable(v) {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

func (pl *CSILimits) isSchedulableAfterPVCAdded(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, pvc, err := helper.As[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPVCAdded: %w", err)
	}
	if pvc.Namespace != pod.Namespace {
		return schedcore.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var name string
		switch {
		case v.PersistentVolumeClaim != nil:
			name = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			name = ephemeral.VolumeClaimName(pod, v)
		default:
			continue
		}
		if name == pvc.Name {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

func (pl *CSILimits) isSchedulableAfterVolumeAttachmentDeleted(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	va, _, err := helper.As[*storagev1.VolumeAttachment](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterVolumeAttachmentDeleted: %w", err)
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil {
			return schedcore.Queue, nil
		}
		if !pl.translator.IsInlineMigratable(v) {
			continue
		}
		pv, err := pl.translator.TranslateInTreeInlineVolumeToCSI(logger, v, pod.Namespace)
		if err != nil || pv == nil {
			return schedcore.Queue, fmt.Errorf("converting volume(%s) from inline to csi: %w", v.Name, err)
		}
		if pv.Spec.CSI != nil && va.Spec.Attacher == pv.Spec.CSI.Driver {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

func (pl *CSILimits) isSchedulableAfterCSINodeUpdated(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	oldN, newN, err := helper.As[*storagev1.CSINode](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterCSINodeUpdated: %w", err)
	}
	count := func(d storagev1.CSINodeDriver) int32 {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			return *d.Allocatable.Count
		}
		return 0
	}
	old := map[string]int32{}
	for _, d := range oldN.Spec.Drivers {
		old[d.Name] = count(d)
	}
	for _, d := range newN.Spec.Drivers {
		if count(d) > old[d.Name] {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

// PodBlind: PreFilter reads the pod's volumes and never rejects.
func (pl *CSILimits) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*CSILimits)(nil)
