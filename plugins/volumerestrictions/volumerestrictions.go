package volumerestrictions

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.VolumeRestrictions

	preFilterStateKey schedcore.StateKey = "PreFilter" + Name

	// ErrReasonDiskConflict is the Filter reason when a GCE PD, AWS EBS,
	// ISCSI or RBD volume of the pod is already mounted on the node in a
	// conflicting way.
	ErrReasonDiskConflict = "node(s) had no available disk"
	// ErrReasonReadWriteOncePodConflict is the Filter reason when a
	// ReadWriteOncePod claim of the pod is already used by another pod.
	ErrReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

// VolumeRestrictions checks disk conflicts with the node's pods and
// ReadWriteOncePod claims already in use.
type VolumeRestrictions struct {
	h *schedcore.Handle
}

var (
	_ schedcore.PreFilterPlugin     = (*VolumeRestrictions)(nil)
	_ schedcore.PreFilterExtensions = (*VolumeRestrictions)(nil)
	_ schedcore.FilterPlugin        = (*VolumeRestrictions)(nil)
	_ schedcore.EnqueueExtensions   = (*VolumeRestrictions)(nil)
	_ schedcore.NodeLocalPlugin     = (*VolumeRestrictions)(nil)
)

// NodeLocal is true for pods without claims or disk volumes: only those
// can conflict (ReadWriteOncePod claims across the cluster, disks).
func (pl *VolumeRestrictions) NodeLocal(pod *v1.Pod) bool { return helper.OnlyNodeLocalVolumes(pod) }

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &VolumeRestrictions{h: h}, nil
}

// Name returns the plugin's name.
func (pl *VolumeRestrictions) Name() string { return Name }

// preFilterState holds the pod's ReadWriteOncePod claims and how many
// scheduled pods use them.
type preFilterState struct {
	// needsDiskCheck is set when the pod has GCE PD, EBS, RBD or ISCSI volumes.
	needsDiskCheck bool
	// rwopClaims are the names of the pod's ReadWriteOncePod claims.
	rwopClaims map[string]struct{}
	// conflictingPVCRefCount counts references to them by scheduled pods.
	conflictingPVCRefCount int
}

// Clone copies the count, which AddPod/RemovePod change.
func (s *preFilterState) Clone() schedcore.StateData {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

func (s *preFilterState) conflictsOf(pod *v1.Pod) int {
	n := 0
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim == nil {
			continue
		}
		if _, ok := s.rwopClaims[v.PersistentVolumeClaim.ClaimName]; ok {
			n++
		}
	}
	return n
}

func needsRestrictionsCheck(v *v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// PreFilter looks up the pod's claims (a missing one is
// UnschedulableAndUnresolvable with the lister's NotFound message), counts
// the uses of its ReadWriteOncePod claims, and skips when there is nothing
// to check.
func (pl *VolumeRestrictions) PreFilter(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	s := &preFilterState{}
	for i := range pod.Spec.Volumes {
		if needsRestrictionsCheck(&pod.Spec.Volumes[i]) {
			s.needsDiskCheck = true
			break
		}
	}
	snap := pl.h.Snapshot()
	storage := snap.StorageLister()
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc := storage.PVC(pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		if pvc == nil {
			return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, helper.NotFoundMessage(helper.ResourcePVC, v.PersistentVolumeClaim.ClaimName))
		}
		if !helper.HasAccessMode(pvc.Spec.AccessModes, v1.ReadWriteOncePod) {
			continue
		}
		if s.rwopClaims == nil {
			s.rwopClaims = map[string]struct{}{}
		}
		s.rwopClaims[pvc.Name] = struct{}{}
	}
	for name := range s.rwopClaims {
		// At most one pod can use a ReadWriteOncePod claim.
		if snap.IsPVCUsedByPods(pod.Namespace + "/" + name) {
			s.conflictingPVCRefCount++
		}
	}
	if !s.needsDiskCheck && s.conflictingPVCRefCount == 0 {
		return nil, schedcore.Skipped()
	}
	cycleState.Write(preFilterStateKey, s)
	return nil, nil
}

// AddPod counts the added pod's uses of the ReadWriteOncePod claims.
func (pl *VolumeRestrictions) AddPod(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, podInfoToAdd *schedcore.PodInfo, _ *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	s.conflictingPVCRefCount += s.conflictsOf(podInfoToAdd.Pod)
	return nil
}

// RemovePod uncounts the removed pod's uses of the ReadWriteOncePod claims.
func (pl *VolumeRestrictions) RemovePod(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, podInfoToRemove *schedcore.PodInfo, _ *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	s.conflictingPVCRefCount -= s.conflictsOf(podInfoToRemove.Pod)
	return nil
}

// Filter rejects the node on a disk conflict with one of its pods
// (ErrReasonDiskConflict) or when a ReadWriteOncePod claim of the pod is in
// use (ErrReasonReadWriteOncePodConflict); both are Unschedulable, since
// preemption may help.
func (pl *VolumeRestrictions) Filter(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if s.needsDiskCheck && !satisfyVolumeConflicts(pod, nodeInfo.Pods) {
		return schedcore.NewStatus(schedcore.Unschedulable, ErrReasonDiskConflict)
	}
	if s.conflictingPVCRefCount > 0 {
		return schedcore.NewStatus(schedcore.Unschedulable, ErrReasonReadWriteOncePodConflict)
	}
	return nil
}

func satisfyVolumeConflicts(pod *v1.Pod, pods []*schedcore.PodInfo) bool {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsRestrictionsCheck(v) {
			continue
		}
		for _, ev := range pods {
			if isVolumeConflict(v, ev.Pod) {
				return false
			}
		}
	}
	return true
}

// isVolumeConflict: the same GCE PD unless both mounts are read-only; the
// same EBS volume ID; the same ISCSI IQN unless both are read-only; RBDs
// sharing a monitor, pool and image unless both are read-only.
func isVolumeConflict(volume *v1.Volume, pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		ev := &pod.Spec.Volumes[i]
		if d, ed := volume.GCEPersistentDisk, ev.GCEPersistentDisk; d != nil && ed != nil {
			if d.PDName == ed.PDName && !(d.ReadOnly && ed.ReadOnly) {
				return true
			}
		}
		if d, ed := volume.AWSElasticBlockStore, ev.AWSElasticBlockStore; d != nil && ed != nil {
			if d.VolumeID == ed.VolumeID {
				return true
			}
		}
		if d, ed := volume.ISCSI, ev.ISCSI; d != nil && ed != nil {
			if d.IQN == ed.IQN && !(d.ReadOnly && ed.ReadOnly) {
				return true
			}
		}
		if d, ed := volume.RBD, ev.RBD; d != nil && ed != nil {
			if haveOverlap(d.CephMonitors, ed.CephMonitors) && d.RBDPool == ed.RBDPool && d.RBDImage == ed.RBDImage && !(d.ReadOnly && ed.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func haveOverlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// EventsToRegister: an assigned pod deleted (may release a disk or a
// ReadWriteOncePod claim), a node added, a claim added.
func (pl *VolumeRestrictions) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterAssignedPodDeleted},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeClaimAdded},
	}, nil
}

// isSchedulableAfterPersistentVolumeClaimAdded queues the pod when the new
// claim is one of its own.
func (pl *VolumeRestrictions) isSchedulableAfterPersistentVolumeClaimAdded(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, pvc, err := helper.As[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPersistentVolumeClaimChange: %w", err)
	}
	if pvc.Namespace != pod.Namespace {
		return schedcore.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			logger.V(5).Info("PVC that is referred from the pod was created, which might make this pod schedulable", "pod", schedcore.PodName(pod), "PVC", pvc.Namespace+"/"+pvc.Name)
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

// isSchedulableAfterAssignedPodDeleted queues the pod when the deleted pod
// (same namespace) had a conflicting disk or shared one of its claims.
func (pl *VolumeRestrictions) isSchedulableAfterAssignedPodDeleted(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	deleted, _, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterAssignedPodDeleted: %w", err)
	}
	if deleted.Namespace != pod.Namespace {
		return schedcore.QueueSkip, nil
	}
	if !satisfyVolumeConflicts(pod, []*schedcore.PodInfo{{Pod: deleted}}) {
		logger.V(5).Info("Pod with the volume that the target pod requires was deleted, which might make this pod schedulable", "pod", schedcore.PodName(pod), "deletedPod", schedcore.PodName(deleted))
		return schedcore.Queue, nil
	}
	claims := map[string]struct{}{}
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil {
			claims[c.ClaimName] = struct{}{}
		}
	}
	for i := range deleted.Spec.Volumes {
		if c := deleted.Spec.Volumes[i].PersistentVolumeClaim; c != nil {
			if _, ok := claims[c.ClaimName]; ok {
				return schedcore.Queue, nil
			}
		}
	}
	return schedcore.QueueSkip, nil
}

// PodBlind: PreFilter of a pod without claims reads nothing (with one, it
// counts the pods using a ReadWriteOncePod claim).
func (pl *VolumeRestrictions) PodBlind(pod *v1.Pod) schedcore.PodBlindness {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].PersistentVolumeClaim != nil || pod.Spec.Volumes[i].Ephemeral != nil {
			return 0
		}
	}
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*VolumeRestrictions)(nil)
