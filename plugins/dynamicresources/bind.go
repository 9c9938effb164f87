package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Binding errors, kube's.
var (
	ErrDeviceBindingTimeout = errors.New("device binding timeout")
	ErrDeviceBindingFailed  = errors.New("device binding failed")
)

// Reserve records the node's allocation of each unallocated claim as in
// flight, so that later pods do not take the same devices before PreBind
// writes it.
func (pl *DynamicResources) Reserve(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, nodeName string) *schedcore.Status {
	state, st := pl.claimsState(cs)
	if state == nil {
		return st
	}
	numWithAllocator := 0
	for _, claim := range state.claims.all() {
		if claim.Status.Allocation == nil {
			numWithAllocator++
		}
	}
	if numWithAllocator == 0 {
		return nil
	}
	extended := state.claims.extendedResourceClaim()
	numToAllocate, userClaims := 0, false
	for _, claim := range state.claims.toAllocate() {
		numToAllocate++
		if claim != extended {
			userClaims = true
		}
	}
	if state.allocator == nil {
		return nil
	}
	state.mu.Lock()
	allocations, ok := state.nodeAllocations[nodeName]
	state.mu.Unlock()
	if !ok || len(allocations.allocationResults) == 0 {
		if !userClaims {
			return nil
		}
		return schedcore.AsStatus(errors.New("claim allocation not found for node"))
	}
	if len(allocations.allocationResults) != numToAllocate || len(allocations.allocationResults) != numWithAllocator {
		return schedcore.AsStatus(fmt.Errorf("internal error, have %d allocations, %d claims to allocate, want %d claims", len(allocations.allocationResults), numToAllocate, numWithAllocator))
	}
	// Filter's results may be the memo's, shared by every node and cycle
	// with the same answer: the claims get their own copy (with share IDs
	// drawn anew), as the allocator hands each cycle its own results.
	results := copyResults(allocations.allocationResults)
	i := 0
	for index, claim := range state.claims.toAllocate() {
		allocation := &results[i]
		state.informationsForClaim[index].allocation = allocation
		if claim == extended {
			claim = allocations.extendedResourceClaim
		}
		claim = claim.DeepCopy()
		if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
			claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
		}
		claim.Status.Allocation = allocation
		pl.dra.SignalClaimPendingAllocation(claim.UID, claim)
		i++
	}
	return nil
}

// Unreserve drops the in-flight allocations of the pod's claims and
// removes the pod from the reservations it made, deleting a special claim
// PreBind already created.
func (pl *DynamicResources) Unreserve(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, _ string) {
	if !pl.enabled {
		return
	}
	state, err := getStateData(cs)
	if err != nil || state.claims.empty() {
		return
	}
	w := pl.handle.ClaimWriter()
	for _, claim := range state.claims.allUserClaims() {
		if pl.dra.MaybeRemoveClaimPendingAllocation(claim.UID, false) {
			pl.dra.RestoreClaim(claim.Namespace, claim.Name)
		}
		if claim.Status.Allocation != nil && resourceclaim.IsReservedForPod(pod, claim, false) && w != nil {
			if err := w.RemoveClaimReservation(ctx, claim, pod.UID); err != nil {
				pl.handle.Logger().Error(err, "unreserve", "resourceclaim", claim.Namespace+"/"+claim.Name)
			}
		}
	}
	extended := state.claims.extendedResourceClaim()
	if extended == nil {
		return
	}
	if pl.dra.MaybeRemoveClaimPendingAllocation(state.claims.initialExtendedUID, false) {
		pl.dra.RestoreClaim(extended.Namespace, extended.Name)
	}
	if isSpecialClaimName(extended.Name) || w == nil {
		return
	}
	if err := pl.deleteClaim(ctx, extended.DeepCopy()); err != nil {
		pl.handle.Logger().Error(err, "delete", "resourceclaim", extended.Namespace+"/"+extended.Name)
	}
}

// PreBindPreFlight tells the framework whether PreBind has work: only for
// pods with claims.
func (pl *DynamicResources) PreBindPreFlight(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, _ string) *schedcore.Status {
	if !pl.enabled {
		return schedcore.Skipped()
	}
	state, err := getStateData(cs)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if state.claims.empty() {
		return schedcore.Skipped()
	}
	return nil
}

// PreBind writes each claim's allocation and the pod's reservation through
// the driver's claim writer (conflicts retried with a fresh claim), then
// waits for the devices' binding conditions, as kube's PreBind does.
func (pl *DynamicResources) PreBind(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeName string) (retStatus *schedcore.Status) {
	state, st := pl.claimsState(cs)
	if state == nil {
		return st
	}
	if pl.handle.ClaimWriter() == nil {
		return schedcore.AsStatus(errors.New("no ResourceClaim writer: the driver cannot allocate claims"))
	}
	for index, claim := range state.claims.all() {
		if resourceclaim.IsReservedForPod(pod, claim, false) {
			continue
		}
		claim, cleanup, err := pl.bindClaim(ctx, state, index, pod, nodeName)
		if err != nil {
			return schedcore.AsStatus(err)
		}
		defer func() {
			if retStatus.IsSuccess() && cleanup != nil {
				cleanup()
			}
		}()
		state.claims.set(index, claim)
	}
	if !pl.bindingConditions() || !hasBindingConditions(state) {
		return nil
	}
	if pl.handle.Events() != nil {
		pl.handle.Events().Eventf(pod, nil, v1.EventTypeNormal, "BindingConditionsPending", "Scheduling", "waiting for binding conditions for device on node %s", nodeName)
	}
	err := pl.waitForBinding(ctx, state)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	return nil
}

// waitForBinding polls every 5 seconds, on the handle's clock, until every
// device's binding conditions are true, one fails or the binding timeout
// passes.
func (pl *DynamicResources) waitForBinding(ctx context.Context, state *stateData) error {
	clk := pl.handle.Clock()
	deadline := clk.Now().Add(pl.bindingTimeout)
	for {
		ready, err := pl.isPodReadyForBinding(state)
		if err != nil {
			return err
		}
		if ready {
			return nil
		}
		if !clk.Now().Before(deadline) {
			return fmt.Errorf("%w: %w", ErrDeviceBindingTimeout, context.DeadlineExceeded)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(5 * time.Second):
		}
	}
}

// bindClaim writes one claim's allocation (from Reserve) and the pod's
// reservation, creating the special claim of extended resources first.
// The returned cleanup, run once PreBind succeeds, drops the in-flight
// allocation.
func (pl *DynamicResources) bindClaim(ctx context.Context, state *stateData, index int, pod *v1.Pod, nodeName string) (*resourceapi.ResourceClaim, func(), error) {
	w := pl.handle.ClaimWriter()
	claim := state.claims.get(index)
	allocation := state.informationsForClaim[index].allocation
	isExtended := false
	if claim == state.claims.extendedResourceClaim() {
		if allocation == nil && claim.Spec.Devices.Requests == nil {
			return claim, nil, nil
		}
		isExtended = true
	}
	claimUID := claim.UID
	modified := false
	defer func() {
		if modified && claim != nil {
			// Can only fail for a concurrent delete or update: fine.
			_ = pl.dra.AssumeClaim(claim)
		}
	}()
	cleanup := func() {
		if allocation != nil {
			pl.dra.MaybeRemoveClaimPendingAllocation(claimUID, true)
		}
	}
	if isExtended && isSpecialClaimName(claim.Name) {
		created, err := pl.createExtendedResourceClaim(ctx, pod, nodeName, state)
		if err != nil {
			return nil, nil, err
		}
		claim, modified = created, true
		if err := state.claims.updateExtendedResourceClaim(claim); err != nil {
			return nil, nil, fmt.Errorf("internal error: update extended ResourceClaim: %w", err)
		}
	}
	refresh := false
	claim = claim.DeepCopy()
	err := retryOnConflict(ctx, func() error {
		if refresh {
			c, err := w.GetClaim(ctx, claim.Namespace, claim.Name)
			if err != nil {
				return fmt.Errorf("get updated claim %s/%s after conflict: %w", claim.Namespace, claim.Name, err)
			}
			claim = c.DeepCopy()
		}
		refresh = true
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("claim %s/%s got deleted in the meantime", claim.Namespace, claim.Name)
		}
		if allocation != nil {
			if claim.Status.Allocation != nil {
				return fmt.Errorf("claim %s/%s got allocated elsewhere in the meantime", claim.Namespace, claim.Name)
			}
			if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
				claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
				c, err := w.UpdateClaim(ctx, claim)
				if err != nil {
					return fmt.Errorf("add finalizer to claim %s/%s: %w", claim.Namespace, claim.Name, err)
				}
				claim = c.DeepCopy()
			}
			claim.Status.Allocation = allocation.DeepCopy()
		}
		claim.Status.ReservedFor = append(claim.Status.ReservedFor, binding(pod))
		if pl.bindingConditions() {
			if claim.Status.Allocation == nil {
				return fmt.Errorf("claim %s/%s got deallocated elsewhere in the meantime", claim.Namespace, claim.Name)
			}
			if claim.Status.Allocation.AllocationTimestamp == nil {
				claim.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: pl.handle.Clock().Now()}
			}
		}
		c, err := w.UpdateClaimStatus(ctx, claim)
		if err != nil {
			if allocation != nil {
				return fmt.Errorf("add allocation and reservation to claim %s/%s: %w", claim.Namespace, claim.Name, err)
			}
			return fmt.Errorf("add reservation to claim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
		claim, modified = c, true
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if isExtended {
		var mappings []v1.ContainerExtendedResourceRequest
		state.mu.Lock()
		if na, ok := state.nodeAllocations[nodeName]; ok {
			mappings = na.containerResourceRequestMappings
		}
		state.mu.Unlock()
		if len(mappings) == 0 {
			return nil, nil, fmt.Errorf("nil or empty request mappings, no update of pod %s/%s ExtendedResourceClaimStatus", pod.Namespace, pod.Name)
		}
		st := &v1.PodExtendedResourceClaimStatus{RequestMappings: mappings, ResourceClaimName: claim.Name}
		if err := w.SetPodExtendedResourceClaimStatus(ctx, pod, st); err != nil {
			return nil, nil, fmt.Errorf("update pod %s/%s ExtendedResourceClaimStatus: %w", pod.Namespace, pod.Name, err)
		}
	}
	return claim, cleanup, nil
}

// createExtendedResourceClaim creates the node's special claim.
func (pl *DynamicResources) createExtendedResourceClaim(ctx context.Context, pod *v1.Pod, nodeName string, state *stateData) (*resourceapi.ResourceClaim, error) {
	state.mu.Lock()
	na, ok := state.nodeAllocations[nodeName]
	state.mu.Unlock()
	if !ok || na.extendedResourceClaim == nil {
		return nil, fmt.Errorf("extended resource claim not found for node %s", nodeName)
	}
	claim := na.extendedResourceClaim.DeepCopy()
	claim.Status.Allocation = nil
	claim.Name, claim.UID = "", ""
	created, err := pl.handle.ClaimWriter().CreateClaim(ctx, claim)
	if err != nil {
		return nil, fmt.Errorf("create claim for extended resources %s/%s: %w", claim.Namespace, claim.GenerateName, err)
	}
	return created, nil
}

// retryOnConflict is client-go's retry.RetryOnConflict with
// retry.DefaultRetry (5 tries, 10ms apart, 10% jitter), written here so
// that the plugin does not need client-go.
func retryOnConflict(ctx context.Context, fn func() error) error {
	backoff := wait.Backoff{Steps: 5, Duration: 10 * time.Millisecond, Factor: 1.0, Jitter: 0.1}
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(context.Context) (bool, error) {
		err := fn()
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsConflict(err):
			last = err
			return false, nil
		default:
			return false, err
		}
	})
	if wait.Interrupted(err) {
		err = last
	}
	return err
}

func (pl *DynamicResources) bindingConditions() bool {
	return pl.features.DRADeviceBindingConditions && pl.features.DRAResourceClaimDeviceStatus
}

// isClaimReadyForBinding reports whether all binding conditions of the
// claim's devices are true; a true binding failure condition is an error.
func isClaimReadyForBinding(claim *resourceapi.ResourceClaim) (bool, error) {
	if claim.Status.Allocation == nil {
		return false, nil
	}
	for i := range claim.Status.Allocation.Devices.Results {
		r := &claim.Status.Allocation.Devices.Results[i]
		if len(r.BindingConditions) == 0 {
			continue
		}
		ds := allocatedDeviceStatus(claim, r)
		if ds == nil {
			return false, nil
		}
		for _, c := range r.BindingFailureConditions {
			if f := apimeta.FindStatusCondition(ds.Conditions, c); f != nil && f.Status == metav1.ConditionTrue {
				return false, fmt.Errorf("%w: claim=%s, reason=%s, message=%q", ErrDeviceBindingFailed, claim.Name, f.Reason, f.Message)
			}
		}
		for _, c := range r.BindingConditions {
			if !apimeta.IsStatusConditionTrue(ds.Conditions, c) {
				return false, nil
			}
		}
	}
	return true, nil
}

// isClaimTimeout reports whether a claim's binding conditions have waited
// longer than the binding timeout since allocation.
func (pl *DynamicResources) isClaimTimeout(claim *resourceapi.ResourceClaim) bool {
	if !pl.bindingConditions() || claim.Status.Allocation == nil || claim.Status.Allocation.AllocationTimestamp == nil {
		return false
	}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.BindingConditions == nil {
			continue
		}
		if claim.Status.Allocation.AllocationTimestamp.Add(pl.bindingTimeout).Before(pl.handle.Clock().Now()) {
			return true
		}
	}
	return false
}

func (pl *DynamicResources) isPodReadyForBinding(state *stateData) (bool, error) {
	for index, claim := range state.claims.all() {
		c, ok := pl.dra.Claim(claim.Namespace, claim.Name)
		if !ok {
			return false, fmt.Errorf("could not find ResourceClaim %q", claim.Namespace+"/"+claim.Name)
		}
		state.claims.set(index, c)
		ready, err := isClaimReadyForBinding(c)
		if err != nil {
			return false, err
		}
		if !ready {
			if pl.isClaimTimeout(c) {
				return false, fmt.Errorf("%w: claim=%s", ErrDeviceBindingTimeout, c.Name)
			}
			return false, nil
		}
	}
	return true, nil
}

func hasBindingConditions(state *stateData) bool {
	for _, claim := range state.claims.all() {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, d := range claim.Status.Allocation.Devices.Results {
			if len(d.BindingConditions) > 0 {
				return true
			}
		}
	}
	return false
}

func allocatedDeviceStatus(claim *resourceapi.ResourceClaim, r *resourceapi.DeviceRequestAllocationResult) *resourceapi.AllocatedDeviceStatus {
	for i := range claim.Status.Devices {
		d := &claim.Status.Devices[i]
		if d.Device == r.Device && d.Driver == r.Driver && d.Pool == r.Pool {
			return d
		}
	}
	return nil
}
