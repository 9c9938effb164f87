package volumezone

import (
	"context"
	"fmt"
	"reflect"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.VolumeZone

	preFilterStateKey schedcore.StateKey = "PreFilter" + Name

	// ErrReasonConflict is the Filter reason when a bound PV's zone or
	// region labels do not match the node's.
	ErrReasonConflict = "node(s) had no available volume zone"
)

// topologyLabels are the PV labels checked, in kube's order.
var topologyLabels = []string{
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
}

func translateToGALabel(label string) string {
	switch label {
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	}
	return label
}

// VolumeZone checks that the zones of the pod's bound PVs match the node.
type VolumeZone struct {
	h *schedcore.Handle
}

var (
	_ schedcore.PreFilterPlugin   = (*VolumeZone)(nil)
	_ schedcore.FilterPlugin      = (*VolumeZone)(nil)
	_ schedcore.EnqueueExtensions = (*VolumeZone)(nil)
	_ schedcore.NodeLocalPlugin   = (*VolumeZone)(nil)
)

// NodeLocal is true for pods without claims, the only volumes it checks.
func (pl *VolumeZone) NodeLocal(pod *v1.Pod) bool { return helper.OnlyNodeLocalVolumes(pod) }

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &VolumeZone{h: h}, nil
}

// Name returns the plugin's name.
func (pl *VolumeZone) Name() string { return Name }

// pvTopology is one topology label of a PV: its key and its zones.
type pvTopology struct {
	pvName string
	key    string
	values map[string]struct{}
}

type stateData struct {
	podPVTopologies []pvTopology
}

// Clone returns the state itself: it does not change after PreFilter.
func (d *stateData) Clone() schedcore.StateData { return d }

// PreFilter collects the topology labels of the PVs bound to the pod's
// claims; claims of WaitForFirstConsumer classes not yet bound are skipped.
// Skip when there are none.
func (pl *VolumeZone) PreFilter(_ context.Context, cs *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	tops, st := pl.getPVbyPod(pl.h.Logger(), pod)
	if !st.IsSuccess() {
		return nil, st
	}
	if len(tops) == 0 {
		return nil, schedcore.Skipped()
	}
	cs.Write(preFilterStateKey, &stateData{podPVTopologies: tops})
	return nil, nil
}

func unresolvable(msg string) *schedcore.Status {
	return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, msg)
}

func (pl *VolumeZone) getPVbyPod(logger logr.Logger, pod *v1.Pod) ([]pvTopology, *schedcore.Status) {
	var out []pvTopology
	storage := pl.h.Snapshot().StorageLister()
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		if name == "" {
			return nil, unresolvable("PersistentVolumeClaim had no name")
		}
		pvc := storage.PVC(pod.Namespace, name)
		if pvc == nil {
			return nil, unresolvable(helper.NotFoundMessage(helper.ResourcePVC, name))
		}
		pvName := pvc.Spec.VolumeName
		if pvName == "" {
			scName := storagehelpers.GetPersistentVolumeClaimClass(pvc)
			if scName == "" {
				return nil, unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
			}
			class := storage.StorageClass(scName)
			if class == nil {
				return nil, unresolvable(helper.NotFoundMessage(helper.ResourceStorageClass, scName))
			}
			if class.VolumeBindingMode == nil {
				return nil, unresolvable(fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", scName))
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, unresolvable("PersistentVolume had no name")
		}
		pv := storage.PV(pvName)
		if pv == nil {
			return nil, unresolvable(helper.NotFoundMessage(helper.ResourcePV, pvName))
		}
		out = append(out, getPVTopologies(logger, pv)...)
	}
	return out, nil
}

// getPVTopologies reads the PV's zone and region labels (values split on
// "__"); unparsable values are ignored, as in kube.
func getPVTopologies(logger logr.Logger, pv *v1.PersistentVolume) []pvTopology {
	out := make([]pvTopology, 0)
	for _, key := range topologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		zones, err := helper.LabelZonesToSet(value)
		if err != nil {
			logger.V(5).Info("failed to parse PV's topology label, ignoring the label", "label", key+":"+value, "err", err)
			continue
		}
		out = append(out, pvTopology{pvName: pv.Name, key: key, values: zones})
	}
	return out
}

// Filter passes nodes without any zone or region label (single-zone
// clusters); otherwise each PV topology label must be on the node (the beta
// key falling back to the GA one) with one of the PV's values, else
// ErrReasonConflict, UnschedulableAndUnresolvable.
func (pl *VolumeZone) Filter(_ context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	var tops []pvTopology
	if state, ok := schedcore.Lookup[*stateData](cs, preFilterStateKey); ok {
		tops = state.podPVTopologies
	} else {
		// No PreFilter state (Filter called on its own): computed here.
		var st *schedcore.Status
		if tops, st = pl.getPVbyPod(pl.h.Logger(), pod); !st.IsSuccess() {
			return st
		}
	}
	node := nodeInfo.Node()
	if !hasTopologyLabel(node) {
		return nil
	}
	for _, t := range tops {
		if _, _, ok := t.matches(node); !ok {
			return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonConflict)
		}
	}
	return nil
}

// hasTopologyLabel reports whether the node has a zone or region label;
// a node without any (a single-zone cluster) fits every PV.
func hasTopologyLabel(node *v1.Node) bool {
	for _, l := range topologyLabels {
		if _, ok := node.Labels[l]; ok {
			return true
		}
	}
	return false
}

// matches reports whether the node's value for the topology key (the GA
// key's when the node lacks a beta one) is one of the PV's; value and has
// say what the node has.
func (t *pvTopology) matches(node *v1.Node) (value string, has, ok bool) {
	v, has := node.Labels[t.key]
	if !has {
		v, has = node.Labels[translateToGALabel(t.key)]
	}
	_, in := t.values[v]
	return v, has, has && in
}

// EventsToRegister: a WaitForFirstConsumer StorageClass added, a node added
// or relabelled, one of the pod's claims added or updated, a PV added or its
// topology labels changed.
func (pl *VolumeZone) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.StorageClass, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterStorageClassAdded},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeClaimChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolume, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeChange},
	}, nil
}

func (pl *VolumeZone) isSchedulableAfterPersistentVolumeClaimChange(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, pvc, err := helper.As[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPersistentVolumeClaimChange: %w", err)
	}
	if pvc == nil || pvc.Namespace != pod.Namespace {
		return schedcore.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil && c.ClaimName == pvc.Name {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

func (pl *VolumeZone) isSchedulableAfterStorageClassAdded(_ logr.Logger, _ *v1.Pod, _, newObj any) (schedcore.QueueingHint, error) {
	_, sc, err := helper.As[*storagev1.StorageClass](nil, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterStorageClassAdded: %w", err)
	}
	if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}

func (pl *VolumeZone) isSchedulableAfterPersistentVolumeChange(logger logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	oldPV, newPV, err := helper.As[*v1.PersistentVolume](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, fmt.Errorf("unexpected objects in isSchedulableAfterPersistentVolumeChange: %w", err)
	}
	if oldPV == nil {
		return schedcore.Queue, nil
	}
	if !reflect.DeepEqual(getPVTopologies(logger, oldPV), getPVTopologies(logger, newPV)) {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

// PodBlind: PreFilter reads the pod's claims and their volumes, no pod.
func (pl *VolumeZone) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*VolumeZone)(nil)
