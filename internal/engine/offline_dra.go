package engine

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The offline cluster's side of Dynamic Resource Allocation: the claim
// writes of DynamicResources go to an in-memory API server
// (MemoryClaimWriter) whose changes reach the queue as the claim informer
// would deliver them, and what kube's resourceclaim controller and garbage
// collector do is done here: a pod that arrives gets its template claims,
// a pod that goes (departure, deletion, eviction) releases its claims.

// offlineDRA is the DRA state of an offline cluster.
type offlineDRA struct {
	writer    *MemoryClaimWriter
	templates map[string]*resourceapi.ResourceClaimTemplate
}

// newDRA has the offline cluster's claim writes go to m.
func (c *Offline) newDRA(m *schedcore.DRAManager, tmpl []*resourceapi.ResourceClaimTemplate) {
	c.dra.templates = templatesByKey(tmpl)
	c.dra.writer = &MemoryClaimWriter{DRA: m, OnClaim: c.claimChanged, OnPodStatus: c.podExtendedClaim}
}

// claimChanged delivers a stored claim change to the queue.
func (c *Offline) claimChanged(old, cur *resourceapi.ResourceClaim) {
	c.changes++
	if c.Queue == nil {
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
	c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, ev, oldObj, newObj, nil)
}

// podExtendedClaim records the claim of a pod's DRA-backed extended
// resources in its status, as the API server stores the scheduler's
// patch, and delivers the update to the queue.
func (c *Offline) podExtendedClaim(pod *v1.Pod, st *v1.PodExtendedResourceClaimStatus) {
	cur, ok := c.store.get(pod.Namespace, pod.Name)
	if !ok || cur.UID != pod.UID {
		return
	}
	upd := cur.DeepCopy()
	upd.Status.ExtendedResourceClaimStatus = st.DeepCopy()
	c.store.put(upd)
	if upd.Spec.NodeName == "" {
		c.Queue.Update(c.Options.Logger, cur, upd)
	}
}

// createTemplateClaims makes an arriving pod's template claims, as the
// resourceclaim controller would, and returns the pod as it then is.
func (c *Offline) createTemplateClaims(ctx context.Context, pod *v1.Pod) *v1.Pod {
	if len(pod.Spec.ResourceClaims) == 0 {
		return pod
	}
	exists := func(namespace, name string) bool { _, ok := c.DRA.Claim(namespace, name); return ok }
	p, claims := TemplateClaims(pod, c.dra.templates, exists)
	for _, cl := range claims {
		if _, err := c.dra.writer.CreateClaim(ctx, cl); err != nil {
			c.Options.Logger.Error(err, "creating template claim", "pod", schedcore.PodName(pod))
		}
	}
	return p
}

// podClaims returns the pod's claims as they are now: its own, then the
// one of its DRA-backed extended resources.
func (c *Offline) podClaims(pod *v1.Pod) []*resourceapi.ResourceClaim {
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
		if cl, ok := c.DRA.Claim(pod.Namespace, *name); ok {
			out = append(out, cl)
		}
	}
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		if cl, ok := c.DRA.Claim(pod.Namespace, st.ResourceClaimName); ok {
			out = append(out, cl)
		}
	}
	return out
}

// PodDevice is one device allocated to a claim of a pod.
type PodDevice struct {
	// Claim is the ResourceClaim, "namespace/name".
	Claim string
	resourceapi.DeviceRequestAllocationResult
}

// Devices lists the devices allocated to the pod's claims, in claim and
// allocation order.
func (c *Offline) Devices(pod *v1.Pod) []PodDevice {
	if c.DRA.Empty() {
		return nil
	}
	if cur, ok := c.store.get(pod.Namespace, pod.Name); ok && cur.UID == pod.UID {
		pod = cur
	}
	var out []PodDevice
	for _, cl := range c.podClaims(pod) {
		if cl.Status.Allocation == nil {
			continue
		}
		for _, r := range cl.Status.Allocation.Devices.Results {
			out = append(out, PodDevice{Claim: cl.Namespace + "/" + cl.Name, DeviceRequestAllocationResult: r})
		}
	}
	return out
}

// releaseClaims does for a deleted pod what kube's resourceclaim
// controller and garbage collector do: claims the pod owns are deleted,
// other claims lose the pod's reservation and, reserved for nobody any
// more, their allocation. Their devices are free again, and each change
// reaches the queue as a claim event.
func (c *Offline) releaseClaims(ctx context.Context, pod *v1.Pod) {
	if c.DRA.Empty() {
		return
	}
	for _, cl := range c.podClaims(pod) {
		if metav1.IsControlledBy(cl, pod) {
			_ = c.dra.writer.DeleteClaim(ctx, cl)
			continue
		}
		upd := cl.DeepCopy()
		upd.Status.ReservedFor = slices.DeleteFunc(upd.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == pod.UID })
		if len(upd.Status.ReservedFor) == len(cl.Status.ReservedFor) {
			continue
		}
		if len(upd.Status.ReservedFor) == 0 {
			upd.Status.Allocation, upd.Status.Devices = nil, nil
		}
		_, _ = c.dra.writer.UpdateClaimStatus(ctx, upd)
	}
}
