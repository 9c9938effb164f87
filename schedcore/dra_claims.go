package schedcore

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
)

// AddClaim stores a claim as the API server has it (an informer's add or
// update). An assumed newer version written by the scheduler stays until
// the API's version catches up, as in kube's assume cache.
func (m *DRAManager) AddClaim(c *resourceapi.ResourceClaim) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := c.Namespace + "/" + c.Name
	e := m.claims[k]
	if e == nil {
		e = &claimEntry{}
		m.claims[k] = e
	}
	m.claimsRev++
	before := e.latest()
	e.api = c
	m.indexOwnersLocked(c)
	if e.assumed != nil && (e.assumed.UID != c.UID || !olderVersion(c, e.assumed)) {
		e.assumed = nil
	}
	m.moveAllocLocked(allocationOf(before), allocationOf(e.latest()))
	if allocationChanged(before, e.latest()) {
		m.allocations++
	}
}

// UpdateClaim is AddClaim for an informer's update.
func (m *DRAManager) UpdateClaim(_, c *resourceapi.ResourceClaim) { m.AddClaim(c) }

// DeleteClaim removes a claim (and any assumed version of it).
func (m *DRAManager) DeleteClaim(c *resourceapi.ResourceClaim) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := c.Namespace + "/" + c.Name
	if e := m.claims[k]; e != nil {
		m.unindexOwnersLocked(e.api)
		m.unindexOwnersLocked(e.assumed)
		m.moveAllocLocked(allocationOf(e.latest()), nil)
		if l := e.latest(); l != nil && l.Status.Allocation != nil {
			m.allocations++
		}
		delete(m.claims, k)
		m.claimsRev++
	}
}

// olderVersion reports whether a's resourceVersion is older than b's (both
// numeric, as etcd's are; otherwise not older).
func olderVersion(a, b *resourceapi.ResourceClaim) bool {
	av, err1 := strconv.ParseInt(a.ResourceVersion, 10, 64)
	bv, err2 := strconv.ParseInt(b.ResourceVersion, 10, 64)
	return err1 == nil && err2 == nil && av < bv
}

func allocationChanged(a, b *resourceapi.ResourceClaim) bool {
	var aa, ba *resourceapi.AllocationResult
	if a != nil {
		aa = a.Status.Allocation
	}
	if b != nil {
		ba = b.Status.Allocation
	}
	return aa != ba
}

// ErrClaimNotFound is returned for a claim the manager does not have.
var ErrClaimNotFound = fmt.Errorf("resourceclaim not found")

// Claim returns the latest known version of a claim: the one the
// scheduler assumed after writing it, else the API's.
func (m *DRAManager) Claim(namespace, name string) (*resourceapi.ResourceClaim, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := m.claims[namespace+"/"+name]
	if e == nil {
		return nil, false
	}
	return e.latest(), true
}

// Claims lists the latest version of every claim, by namespace/name.
func (m *DRAManager) Claims() []*resourceapi.ResourceClaim {
	m.mu.RLock()
	defer m.mu.RUnlock()
	keys := make([]string, 0, len(m.claims))
	for k := range m.claims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*resourceapi.ResourceClaim, 0, len(keys))
	for _, k := range keys {
		out = append(out, m.claims[k].latest())
	}
	return out
}

// AssumeClaim records a claim the scheduler has just written (PreBind),
// before the API's version comes back. It fails for an unknown claim or a
// version older than the one held, as kube's assume cache does.
func (m *DRAManager) AssumeClaim(c *resourceapi.ResourceClaim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.claims[c.Namespace+"/"+c.Name]
	if e == nil {
		return fmt.Errorf("%w: %s/%s", ErrClaimNotFound, c.Namespace, c.Name)
	}
	if cur := e.latest(); cur != nil && olderVersion(c, cur) {
		return fmt.Errorf("resourceclaim %s/%s: version %s is older than the known %s", c.Namespace, c.Name, c.ResourceVersion, cur.ResourceVersion)
	}
	m.claimsRev++
	before := e.latest()
	e.assumed = c
	m.indexOwnersLocked(c)
	m.moveAllocLocked(allocationOf(before), allocationOf(c))
	if allocationChanged(before, c) {
		m.allocations++
	}
	return nil
}

// RestoreClaim drops the assumed version of a claim.
func (m *DRAManager) RestoreClaim(namespace, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.claims[namespace+"/"+name]; e != nil && e.assumed != nil {
		m.claimsRev++
		before := e.latest()
		e.assumed = nil
		m.moveAllocLocked(allocationOf(before), allocationOf(e.latest()))
		if allocationChanged(before, e.latest()) {
			m.allocations++
		}
	}
}

// SignalClaimPendingAllocation records an allocation made in Reserve and
// not yet written by PreBind (kube's in-flight allocations); a claim
// already in flight gets one more sharer. A claim found allocated already
// is not recorded.
func (m *DRAManager) SignalClaimPendingAllocation(uid types.UID, allocated *resourceapi.ResourceClaim) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.inFlight[uid]; ok {
		f.sharers++
		m.inFlight[uid] = f
		return
	}
	if e := m.claims[allocated.Namespace+"/"+allocated.Name]; e != nil {
		if l := e.latest(); l != nil && l.UID == uid && l.Status.Allocation != nil {
			return
		}
	}
	m.inFlight[uid] = inFlightAllocation{claim: allocated, sharers: 1}
	m.moveAllocLocked(nil, allocationOf(allocated))
	m.allocations++
	m.claimsRev++
}

// MaybeRemoveClaimPendingAllocation drops one sharer of an in-flight
// allocation (all of them with force) and reports whether it is gone.
func (m *DRAManager) MaybeRemoveClaimPendingAllocation(uid types.UID, force bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.inFlight[uid]
	if !ok {
		return false
	}
	if force || f.sharers == 1 {
		delete(m.inFlight, uid)
		m.moveAllocLocked(allocationOf(f.claim), nil)
		m.allocations++
		m.claimsRev++
		return true
	}
	f.sharers--
	m.inFlight[uid] = f
	return false
}

// PendingAllocation returns the in-flight allocation of a claim, nil if none.
func (m *DRAManager) PendingAllocation(uid types.UID) *resourceapi.AllocationResult {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if f, ok := m.inFlight[uid]; ok && f.claim != nil {
		return f.claim.Status.Allocation
	}
	return nil
}

// Allocations returns every allocation the scheduler must treat as taken:
// the allocated claims (their latest version) and the in-flight
// allocations, with the allocations revision they were read at.
func (m *DRAManager) Allocations() ([]*resourceapi.AllocationResult, int64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*resourceapi.AllocationResult, 0, len(m.claims)+len(m.inFlight))
	for _, e := range m.claims {
		if l := e.latest(); l != nil && l.Status.Allocation != nil {
			out = append(out, l.Status.Allocation)
		}
	}
	for _, f := range m.inFlight {
		if f.claim != nil && f.claim.Status.Allocation != nil {
			out = append(out, f.claim.Status.Allocation)
		}
	}
	return out, m.allocations
}

// ResourceClaimWriter makes the API writes of the DynamicResources plugin
// (PreBind, PostFilter, Unreserve) in the driver's cluster: the dry-run
// commits them into its DRAManager as an API server and its informer
// would, run sends them to the API server. Nil in the Handle means the
// driver writes nothing (explain).
type ResourceClaimWriter interface {
	// GetClaim reads a claim from the API (after a conflict).
	GetClaim(ctx context.Context, namespace, name string) (*resourceapi.ResourceClaim, error)
	// UpdateClaim writes a claim's metadata and spec (the finalizer).
	UpdateClaim(ctx context.Context, claim *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error)
	// UpdateClaimStatus writes a claim's status (allocation, reservedFor).
	UpdateClaimStatus(ctx context.Context, claim *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error)
	// RemoveClaimReservation removes one consumer from status.reservedFor
	// (a strategic merge patch, valid without the latest claim).
	RemoveClaimReservation(ctx context.Context, claim *resourceapi.ResourceClaim, consumer types.UID) error
	// CreateClaim creates a claim (the special claim of DRA-backed
	// extended resources).
	CreateClaim(ctx context.Context, claim *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error)
	// DeleteClaim deletes a claim; a missing one is not an error.
	DeleteClaim(ctx context.Context, claim *resourceapi.ResourceClaim) error
	// SetPodExtendedResourceClaimStatus writes the pod's
	// status.extendedResourceClaimStatus.
	SetPodExtendedResourceClaimStatus(ctx context.Context, pod *v1.Pod, status *v1.PodExtendedResourceClaimStatus) error
}
