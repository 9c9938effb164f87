package volumebinding

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.VolumeBinding

	stateKey schedcore.StateKey = Name
)

// VolumeBinding binds the pod's claims in scheduling: bound claims' PVs
// must accept the node; unbound WaitForFirstConsumer claims get a matching
// PV or dynamic provisioning on the chosen node, assumed in Reserve and
// written in PreBind.
type VolumeBinding struct {
	h           *schedcore.Handle
	bindTimeout time.Duration
	// shape is the score function; nil without StorageCapacityScoring.
	shape      []shapePoint
	assumed    *assumeCache
	translator csitrans.CSITranslator
}

var (
	_ schedcore.PreFilterPlugin        = (*VolumeBinding)(nil)
	_ schedcore.FilterPlugin           = (*VolumeBinding)(nil)
	_ schedcore.PreScorePlugin         = (*VolumeBinding)(nil)
	_ schedcore.ScorePlugin            = (*VolumeBinding)(nil)
	_ schedcore.ReservePlugin          = (*VolumeBinding)(nil)
	_ schedcore.PreBindPreFlightPlugin = (*VolumeBinding)(nil)
	_ schedcore.EnqueueExtensions      = (*VolumeBinding)(nil)
	_ schedcore.NodeLocalPlugin        = (*VolumeBinding)(nil)
)

// NodeLocal is true for pods without claims: a claim bound for one copy
// constrains the next.
func (pl *VolumeBinding) NodeLocal(pod *v1.Pod) bool { return helper.OnlyNodeLocalVolumes(pod) }

// New builds the plugin from VolumeBindingArgs (nil: defaults), defaulted
// and validated as kube does.
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	scoring := h.Features().StorageCapacityScoring
	a, err := args(obj, scoring)
	if err != nil {
		return nil, err
	}
	if err := validate(a, scoring); err != nil {
		return nil, err
	}
	pl := &VolumeBinding{h: h, bindTimeout: time.Duration(*a.BindTimeoutSeconds) * time.Second, assumed: newAssumeCache(), translator: csitrans.New()}
	if scoring {
		for _, p := range a.Shape {
			pl.shape = append(pl.shape, shapePoint{utilization: int64(p.Utilization), score: int64(p.Score) * (schedcore.MaxNodeScore / MaxCustomPriorityScore)})
		}
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *VolumeBinding) Name() string { return Name }

// stateData is shared by the cycle's phases (Clone returns it): Filter
// records each feasible node's volumes under the mutex.
type stateData struct {
	allBound          bool
	podVolumesByNode  map[string]*podVolumes
	claims            *podVolumeClaims
	hasStaticBindings bool
	hasCapacities     bool
	sync.Mutex
}

// Clone returns the state itself, as kube does.
func (d *stateData) Clone() schedcore.StateData { return d }

// PreFilter checks the pod's claims (missing, lost, being deleted:
// UnschedulableAndUnresolvable with kube's messages), rejects pods with
// unbound immediate claims (ErrReasonUnboundImmediate), and skips pods
// without claims.
func (pl *VolumeBinding) PreFilter(_ context.Context, cs *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	s := pl.h.Snapshot().StorageLister()
	if has, err := podHasPVCs(s, pod); err != nil {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, err.Error())
	} else if !has {
		cs.Write(stateKey, &stateData{})
		return nil, schedcore.Skipped()
	}
	claims, err := pl.getPodVolumeClaims(s, pod)
	if err != nil {
		return nil, schedcore.AsStatus(err)
	}
	if len(claims.unboundImmediate) > 0 {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate)
	}
	cs.Write(stateKey, &stateData{podVolumesByNode: map[string]*podVolumes{}, claims: claims})
	return nil, nil
}

// Filter checks the bound claims' PVs against the node and finds PVs or
// provisioning for the unbound ones; failures are
// UnschedulableAndUnresolvable with kube's reasons in kube's order.
func (pl *VolumeBinding) Filter(_ context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	state, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	node := nodeInfo.Node()
	pv, reasons, err := pl.findPodVolumes(pl.h.Logger(), pl.h.Snapshot().StorageLister(), pod, state.claims, node)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if len(reasons) > 0 {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, reasons...)
	}
	state.Lock()
	state.podVolumesByNode[node.Name] = pv
	state.hasStaticBindings = state.hasStaticBindings || len(pv.staticBindings) > 0
	for _, d := range pv.dynamicProvisions {
		state.hasCapacities = state.hasCapacities || d.nodeCapacity != nil
	}
	state.Unlock()
	return nil
}

// PreScore skips without StorageCapacityScoring, and also when no node has
// anything to score (kube then scores 0 everywhere, which adds nothing).
func (pl *VolumeBinding) PreScore(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, _ []*schedcore.NodeInfo) *schedcore.Status {
	if pl.shape == nil {
		return schedcore.Skipped()
	}
	state, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if !state.hasStaticBindings && !state.hasCapacities {
		return schedcore.Skipped()
	}
	return nil
}

// classResource is the requested and available storage of one class.
type classResource struct{ requested, capacity int64 }

// Score rates the node's static bindings (or, without any, its
// provisioning capacities) per storage class with the shape at
// requested*100/capacity (100 when over or without capacity), averaging the
// classes, rounded.
func (pl *VolumeBinding) Score(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	if pl.shape == nil {
		return 0, nil
	}
	state, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	pv, ok := state.podVolumesByNode[nodeInfo.Name()]
	if !ok {
		return 0, nil
	}
	classes := map[string]*classResource{}
	if len(pv.staticBindings) != 0 {
		for _, b := range pv.staticBindings {
			c := classes[b.pv.Spec.StorageClassName]
			if c == nil {
				c = &classResource{}
				classes[b.pv.Spec.StorageClassName] = c
			}
			req, capQ := b.pvc.Spec.Resources.Requests[v1.ResourceStorage], b.pv.Spec.Capacity[v1.ResourceStorage]
			c.requested += req.Value()
			c.capacity += capQ.Value()
		}
	} else {
		for _, d := range pv.dynamicProvisions {
			if d.nodeCapacity == nil {
				continue
			}
			name := *d.pvc.Spec.StorageClassName
			c := classes[name]
			if c == nil {
				c = &classResource{}
				classes[name] = c
			}
			// Capacity is the pool's, not a sum over the claims.
			c.capacity = d.nodeCapacity.Capacity.Value()
			req := d.pvc.Spec.Resources.Requests[v1.ResourceStorage]
			c.requested += req.Value()
		}
	}
	return pl.score(classes), nil
}

func (pl *VolumeBinding) score(classes map[string]*classResource) int64 {
	if len(classes) == 0 {
		return 0
	}
	var sum int64
	for _, c := range classes {
		if c.capacity == 0 || c.requested > c.capacity {
			sum += brokenLinear(pl.shape, 100)
		} else {
			sum += brokenLinear(pl.shape, c.requested*100/c.capacity)
		}
	}
	return int64(math.Round(float64(sum) / float64(len(classes))))
}

// Reserve assumes the node's bindings: each chosen PV bound to its claim,
// each claim to provision annotated with the node, so later cycles see
// them.
func (pl *VolumeBinding) Reserve(_ context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeName string) *schedcore.Status {
	state, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	pv, ok := state.podVolumesByNode[nodeName]
	if !ok {
		state.allBound = true
		return nil
	}
	allBound, err := pl.assumePodVolumes(pod, nodeName, pv)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	state.allBound = allBound
	return nil
}

func (pl *VolumeBinding) assumePodVolumes(pod *v1.Pod, nodeName string, pv *podVolumes) (bool, error) {
	s := pl.h.Snapshot().StorageLister()
	pl.assumed.prune(s)
	if pl.arePodVolumesBound(s, pod) {
		return true, nil
	}
	bindings := []*bindingInfo{}
	for _, b := range pv.staticBindings {
		newPV, dirty, err := volume.GetBindVolumeToClaim(b.pv, b.pvc)
		if err != nil {
			pl.revertPVs(bindings)
			return false, err
		}
		if dirty {
			if err := pl.assumed.assumePV(s, newPV); err != nil {
				pl.revertPVs(bindings)
				return false, err
			}
		}
		bindings = append(bindings, &bindingInfo{pv: newPV, pvc: b.pvc})
	}
	provisions := []*dynamicProvision{}
	for _, d := range pv.dynamicProvisions {
		claim := d.pvc.DeepCopy()
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, volume.AnnSelectedNode, nodeName)
		if err := pl.assumed.assumePVC(s, claim); err != nil {
			pl.revertPVs(bindings)
			pl.revertPVCs(provisions)
			return false, err
		}
		provisions = append(provisions, &dynamicProvision{pvc: claim})
	}
	pv.staticBindings, pv.dynamicProvisions = bindings, provisions
	return false, nil
}

func (pl *VolumeBinding) arePodVolumesBound(s schedcore.StorageLister, pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, isEphemeral := claimName(pod, vol)
		if vol.PersistentVolumeClaim == nil && !isEphemeral {
			continue
		}
		pvc := pl.assumed.pvc(s, pod.Namespace, name)
		if pvc == nil || !isPVCFullyBound(pvc) {
			return false
		}
		if isEphemeral && ephemeral.VolumeIsForPod(pod, pvc) != nil {
			return false
		}
	}
	return true
}

func (pl *VolumeBinding) revertPVs(bindings []*bindingInfo) {
	for _, b := range bindings {
		pl.assumed.restorePV(b.pv)
	}
}

func (pl *VolumeBinding) revertPVCs(provisions []*dynamicProvision) {
	for _, d := range provisions {
		pl.assumed.restorePVC(d.pvc)
	}
}

// Unreserve forgets the pod's assumed bindings.
func (pl *VolumeBinding) Unreserve(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, nodeName string) {
	state, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return
	}
	if pv, ok := state.podVolumesByNode[nodeName]; ok {
		pl.revertPVs(pv.staticBindings)
		pl.revertPVCs(pv.dynamicProvisions)
	}
}

var errNoPodVolumeForNode = errors.New("no pod volume found for node")

// PreBindPreFlight skips PreBind when every claim was already bound.
func (pl *VolumeBinding) PreBindPreFlight(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, nodeName string) *schedcore.Status {
	s, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if s.allBound {
		return schedcore.Skipped()
	}
	if _, ok := s.podVolumesByNode[nodeName]; !ok {
		return schedcore.AsStatus(fmt.Errorf("%w %q", errNoPodVolumeForNode, nodeName))
	}
	return nil
}

// PreBind hands the assumed PVs and claims to the driver's VolumeBinder
// (within bindTimeoutSeconds); without one (explain) there is nothing to
// write.
func (pl *VolumeBinding) PreBind(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeName string) *schedcore.Status {
	s, err := schedcore.ReadAs[*stateData](cs, stateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if s.allBound {
		return nil
	}
	pv, ok := s.podVolumesByNode[nodeName]
	if !ok {
		return schedcore.AsStatus(fmt.Errorf("%w %q", errNoPodVolumeForNode, nodeName))
	}
	if pl.h.VolumeBinder() == nil {
		return nil
	}
	pvs := make([]*v1.PersistentVolume, 0, len(pv.staticBindings))
	for _, b := range pv.staticBindings {
		pvs = append(pvs, b.pv)
	}
	pvcs := make([]*v1.PersistentVolumeClaim, 0, len(pv.dynamicProvisions))
	for _, d := range pv.dynamicProvisions {
		pvcs = append(pvcs, d.pvc)
	}
	if pl.bindTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pl.bindTimeout)
		defer cancel()
	}
	if err := pl.h.VolumeBinder().BindPodVolumes(ctx, pod, pvs, pvcs); err != nil {
		pl.revertPVs(pv.staticBindings)
		pl.revertPVCs(pv.dynamicProvisions)
		return schedcore.AsStatus(fmt.Errorf("binding volumes: %w", err))
	}
	return nil
}

// EventsToRegister: StorageClass added or its allowedTopologies changed;
// one of the pod's claims added or updated; any PV added or updated; a node
// added or relabelled; a CSINode added or its migrated plugins changed; a
// CSIDriver's storage capacity turned off; a CSIStorageCapacity added or
// grown.
func (pl *VolumeBinding) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.StorageClass, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterStorageClassChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterPersistentVolumeClaimChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolume, ActionType: schedcore.Add | schedcore.Update}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.CSINode, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterCSINodeChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.CSIDriver, ActionType: schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterCSIDriverChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.CSIStorageCapacity, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterCSIStorageCapacityChange},
	}, nil
}

func (pl *VolumeBinding) isSchedulableAfterCSINodeChange(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	if oldObj == nil {
		return schedcore.Queue, nil
	}
	o, n, err := helper.As[*storagev1.CSINode](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if o.Annotations[v1.MigratedPluginsAnnotationKey] != n.Annotations[v1.MigratedPluginsAnnotationKey] {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

func (pl *VolumeBinding) isSchedulableAfterPersistentVolumeClaimChange(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, pvc, err := helper.As[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if pod.Namespace != pvc.Namespace {
		return schedcore.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim == nil && vol.Ephemeral == nil {
			continue
		}
		if name, _ := claimName(pod, vol); name == pvc.Name {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

func (pl *VolumeBinding) isSchedulableAfterStorageClassChange(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	o, n, err := helper.As[*storagev1.StorageClass](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if o == nil || !apiequality.Semantic.DeepEqual(n.AllowedTopologies, o.AllowedTopologies) {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

func (pl *VolumeBinding) isSchedulableAfterCSIStorageCapacityChange(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	o, n, err := helper.As[*storagev1.CSIStorageCapacity](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if o == nil {
		return schedcore.Queue, nil
	}
	limit := func(c *storagev1.CSIStorageCapacity) (int64, bool) {
		if c.MaximumVolumeSize != nil {
			return c.MaximumVolumeSize.Value(), true
		}
		if c.Capacity != nil {
			return c.Capacity.Value(), true
		}
		return 0, false
	}
	ol, oldOK := limit(o)
	nl, newOK := limit(n)
	if newOK && (!oldOK || nl > ol) {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

func (pl *VolumeBinding) isSchedulableAfterCSIDriverChange(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	o, n, err := helper.As[*storagev1.CSIDriver](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.CSI == nil || vol.CSI.Driver != n.Name {
			continue
		}
		if o.Spec.StorageCapacity != nil && *o.Spec.StorageCapacity && (n.Spec.StorageCapacity == nil || !*n.Spec.StorageCapacity) {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}

// PodBlind: PreFilter reads the pod's claims and the storage objects,
// no pod.
func (pl *VolumeBinding) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*VolumeBinding)(nil)
