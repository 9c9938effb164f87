package dryrun

import (
	"context"
	"slices"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// draDriver is the dry-run's side of Dynamic Resource Allocation: the
// manager the plugins read, the in-memory API server their claim writes
// go to (each change reaching the queue as a ResourceClaim event, as the
// informer would deliver it), and what kube's resourceclaim controller
// does when a preemption victim goes.
type draDriver struct {
	dra    *schedcore.DRAManager
	writer *engine.MemoryClaimWriter
	s      *store
	q      schedcore.SchedulingQueue
	logger logr.Logger
}

func newDRADriver(s *store, f schedcore.Features, logger logr.Logger) *draDriver {
	d := &draDriver{dra: schedcore.NewDRAManager(), s: s, logger: logger}
	d.dra.SetDeviceTaintRules(f.DRADeviceTaints && f.DRADeviceTaintRules)
	d.writer = &engine.MemoryClaimWriter{DRA: d.dra, OnClaim: d.claimChanged, OnPodStatus: d.podStatus}
	return d
}

// claimChanged delivers a claim change to the queue.
func (d *draDriver) claimChanged(old, cur *resourceapi.ResourceClaim) {
	if d.q == nil {
		return
	}
	ev := schedcore.ClusterEvent{Resource: schedcore.ResourceClaim, ActionType: schedcore.Update}
	var oldObj, newObj any
	switch {
	case old == nil:
		ev.ActionType, newObj = schedcore.Add, cur
	case cur == nil:
		ev.ActionType, oldObj = schedcore.Delete, old
	default:
		oldObj, newObj = old, cur
	}
	d.q.MoveAllToActiveOrBackoffQueue(d.logger, ev, oldObj, newObj, nil)
}

// podStatus records the claim of a pod's DRA-backed extended resources in
// its status, as the API server stores the scheduler's patch.
func (d *draDriver) podStatus(pod *v1.Pod, st *v1.PodExtendedResourceClaimStatus) {
	k := schedcore.PodKey(pod)
	cur, ok := d.s.pods[k]
	if !ok {
		return
	}
	upd := cur.DeepCopy()
	upd.Status.ExtendedResourceClaimStatus = st.DeepCopy()
	d.s.pods[k] = upd
	if d.q != nil && upd.Spec.NodeName == "" {
		d.q.Update(d.logger, cur, upd)
	}
}

// podClaims returns the pod's claims (its own, then the one of its
// extended resources), as they are now.
func (d *draDriver) podClaims(pod *v1.Pod) []*resourceapi.ResourceClaim {
	var out []*resourceapi.ResourceClaim
	for _, pc := range pod.Spec.ResourceClaims {
		name := pc.ResourceClaimName
		if name == nil {
			for _, st := range pod.Status.ResourceClaimStatuses {
				if st.Name == pc.Name {
					name = st.ResourceClaimName
				}
			}
		}
		if name == nil {
			continue
		}
		if c, ok := d.dra.Claim(pod.Namespace, *name); ok {
			out = append(out, c)
		}
	}
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		if c, ok := d.dra.Claim(pod.Namespace, st.ResourceClaimName); ok {
			out = append(out, c)
		}
	}
	return out
}

// devices lists the devices allocated to the pod's claims.
func (d *draDriver) devices(pod *v1.Pod) []report.AllocatedDevice {
	var out []report.AllocatedDevice
	for _, c := range d.podClaims(pod) {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			out = append(out, report.AllocatedDevice{
				Claim: c.Namespace + "/" + c.Name, Request: r.Request, Driver: r.Driver, Pool: r.Pool, Device: r.Device,
				AdminAccess: ptr.Deref(r.AdminAccess, false), Shared: r.ShareID != nil,
			})
		}
	}
	return out
}

// releaseVictim does for a deleted pod what kube's resourceclaim
// controller and garbage collector do: claims the pod owns are deleted,
// other claims lose the pod's reservation and, reserved for nobody any
// more, their allocation. Their devices are free again.
func (d *draDriver) releaseVictim(ctx context.Context, pod *v1.Pod) {
	for _, c := range d.podClaims(pod) {
		if metav1.IsControlledBy(c, pod) {
			_ = d.writer.DeleteClaim(ctx, c)
			continue
		}
		upd := c.DeepCopy()
		upd.Status.ReservedFor = slices.DeleteFunc(upd.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == pod.UID })
		if len(upd.Status.ReservedFor) == len(c.Status.ReservedFor) {
			continue
		}
		if len(upd.Status.ReservedFor) == 0 {
			upd.Status.Allocation, upd.Status.Devices = nil, nil
		}
		_, _ = d.writer.UpdateClaimStatus(ctx, upd)
	}
}
