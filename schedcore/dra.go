package schedcore

import (
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DRAManager holds the Dynamic Resource Allocation objects the scheduler
// reads (DeviceClasses, ResourceSlices with their DeviceTaintRules applied,
// ResourceClaims) and tracks claim allocations between Reserve and the
// API write in PreBind, as kube-scheduler's DefaultDRAManager does with its
// informers, assume cache and in-flight map. Drivers feed it (dryrun from
// the snapshot and its own commits, run from informers); plugins read it
// through Handle.DRA. It is shared by all profiles and safe for concurrent
// use. Objects are shared and must not be modified.
type DRAManager struct {
	mu sync.RWMutex

	classes  map[string]*resourceapi.DeviceClass
	extended map[v1.ResourceName]*resourceapi.DeviceClass
	slices   map[string]*resourceapi.ResourceSlice
	rules    map[string]*resourceapi.DeviceTaintRule
	// patched is the slices with the taint rules applied, sorted by name;
	// nil means it must be rebuilt.
	patched []*resourceapi.ResourceSlice
	// DeviceTaintRules applies the rules to the slices (the
	// DRADeviceTaintRules gate, GA and on in v1.37).
	deviceTaintRules bool

	claims   map[string]*claimEntry
	inFlight map[types.UID]inFlightAllocation
	// owners files the claims' keys under their owners' UIDs
	// (dra_owners.go).
	owners map[types.UID]map[string]bool

	// objects changes with every class, slice or taint rule change;
	// allocations with every change of what is allocated (a claim's
	// allocation, an in-flight allocation).
	objects, allocations int64
	// allocs indexes the allocations (dra_allocs.go).
	allocs allocIndex
	// claimsRev changes with every change of a claim or of the in-flight
	// allocations: the holders index is of one revision.
	claimsRev int64

	// holders are the claims holding each device (ClaimsAllocatingDevice),
	// built on first use for claimsRev holdersRev; holdersMu guards them
	// (readers of the manager hold mu for reading only).
	holdersMu  sync.Mutex
	holders    map[deviceKey][]*resourceapi.ResourceClaim
	holdersRev int64
}

type claimEntry struct {
	// api is the object as the API server (informer) has it; assumed a
	// newer one the scheduler wrote and has not seen come back yet.
	api, assumed *resourceapi.ResourceClaim
}

func (e *claimEntry) latest() *resourceapi.ResourceClaim {
	if e.assumed != nil {
		return e.assumed
	}
	return e.api
}

type inFlightAllocation struct {
	claim   *resourceapi.ResourceClaim
	sharers int
}

// NewDRAManager returns an empty manager that applies DeviceTaintRules, as
// kube-scheduler v1.37 does by default.
func NewDRAManager() *DRAManager {
	return &DRAManager{
		classes:          map[string]*resourceapi.DeviceClass{},
		extended:         map[v1.ResourceName]*resourceapi.DeviceClass{},
		slices:           map[string]*resourceapi.ResourceSlice{},
		rules:            map[string]*resourceapi.DeviceTaintRule{},
		claims:           map[string]*claimEntry{},
		inFlight:         map[types.UID]inFlightAllocation{},
		deviceTaintRules: true,
		objects:          1,
		allocations:      1,
		claimsRev:        1,
	}
}

// SetDeviceTaintRules turns the application of DeviceTaintRules on or off.
func (m *DRAManager) SetDeviceTaintRules(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deviceTaintRules = on
	m.patched = nil
	m.objects++
}

// Empty reports whether the manager holds no DRA object at all, so that
// plugins can skip work on clusters without DRA.
func (m *DRAManager) Empty() bool {
	if m == nil {
		return true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.classes) == 0 && len(m.slices) == 0 && len(m.claims) == 0
}

// ObjectsRevision changes whenever a DeviceClass, ResourceSlice or
// DeviceTaintRule changes.
func (m *DRAManager) ObjectsRevision() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.objects
}

// AllocationsRevision changes whenever what is allocated changes: a
// claim's allocation (stored or assumed), or an in-flight allocation.
func (m *DRAManager) AllocationsRevision() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.allocations
}

// AddClass adds or replaces a DeviceClass.
func (m *DRAManager) AddClass(c *resourceapi.DeviceClass) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.classes[c.Name] = c
	m.rebuildExtendedLocked()
	m.objects++
}

// DeleteClass removes a DeviceClass.
func (m *DRAManager) DeleteClass(c *resourceapi.DeviceClass) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.classes, c.Name)
	m.rebuildExtendedLocked()
	m.objects++
}

// rebuildExtendedLocked maps extended resource names to classes as kube's
// extended resource cache does: every class backs its implicit
// "deviceclass.resource.kubernetes.io/<name>"; an explicit
// extendedResourceName claimed by several classes goes to the newest
// (creationTimestamp), then to the lowest name.
func (m *DRAManager) rebuildExtendedLocked() {
	clear(m.extended)
	for _, c := range m.classes {
		m.extended[v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+c.Name)] = c
	}
	for _, c := range m.classes {
		if c.Spec.ExtendedResourceName == nil {
			continue
		}
		name := v1.ResourceName(*c.Spec.ExtendedResourceName)
		if cur, ok := m.extended[name]; ok && cur.Spec.ExtendedResourceName != nil && *cur.Spec.ExtendedResourceName == string(name) {
			ct, nt := cur.CreationTimestamp.UnixNano(), c.CreationTimestamp.UnixNano()
			if nt < ct || (nt == ct && c.Name >= cur.Name) {
				continue
			}
		}
		m.extended[name] = c
	}
}

// Class returns a DeviceClass by name.
func (m *DRAManager) Class(name string) (*resourceapi.DeviceClass, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.classes[name]
	return c, ok
}

// Classes lists the DeviceClasses by name.
func (m *DRAManager) Classes() []*resourceapi.DeviceClass {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*resourceapi.DeviceClass, 0, len(m.classes))
	for _, c := range m.classes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ExtendedResourceClass returns the DeviceClass backing an extended
// resource name (DRAExtendedResource), nil if none does.
func (m *DRAManager) ExtendedResourceClass(name v1.ResourceName) *resourceapi.DeviceClass {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.extended[name]
}

// HasExtendedResources reports whether any DeviceClass backs an extended
// resource (every class does, implicitly).
func (m *DRAManager) HasExtendedResources() bool {
	if m == nil {
		return false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.extended) > 0
}

// AddSlice adds or replaces a ResourceSlice.
func (m *DRAManager) AddSlice(s *resourceapi.ResourceSlice) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.slices[s.Name] = s
	m.patched = nil
	m.objects++
}

// DeleteSlice removes a ResourceSlice.
func (m *DRAManager) DeleteSlice(s *resourceapi.ResourceSlice) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.slices, s.Name)
	m.patched = nil
	m.objects++
}

// AddTaintRule adds or replaces a DeviceTaintRule.
func (m *DRAManager) AddTaintRule(r *resourceapi.DeviceTaintRule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules[r.Name] = r
	m.patched = nil
	m.objects++
}

// DeleteTaintRule removes a DeviceTaintRule.
func (m *DRAManager) DeleteTaintRule(r *resourceapi.DeviceTaintRule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rules, r.Name)
	m.patched = nil
	m.objects++
}

// TaintRules lists the DeviceTaintRules by name.
func (m *DRAManager) TaintRules() []*resourceapi.DeviceTaintRule {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*resourceapi.DeviceTaintRule, 0, len(m.rules))
	for _, r := range m.rules {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RawSlices lists the ResourceSlices as stored (without taint rules), by
// name.
func (m *DRAManager) RawSlices() []*resourceapi.ResourceSlice {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*resourceapi.ResourceSlice, 0, len(m.slices))
	for _, s := range m.slices {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Slices lists the ResourceSlices by name with the DeviceTaintRules'
// taints added to the devices they select, as kube's ResourceSlice tracker
// (ListPatchedResourceSlices) presents them to the allocator. The list is
// shared until the next change and must not be modified.
func (m *DRAManager) Slices() []*resourceapi.ResourceSlice {
	m.mu.RLock()
	if m.patched != nil {
		p := m.patched
		m.mu.RUnlock()
		return p
	}
	m.mu.RUnlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.patched != nil {
		return m.patched
	}
	rules := make([]*resourceapi.DeviceTaintRule, 0, len(m.rules))
	for _, r := range m.rules {
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].Name < rules[j].Name })
	out := make([]*resourceapi.ResourceSlice, 0, len(m.slices))
	for _, s := range m.slices {
		if m.deviceTaintRules {
			s = applyTaintRules(s, rules)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	m.patched = out
	return out
}

// applyTaintRules returns the slice with the taints of the matching rules
// appended to the selected devices (a copy only when one matches), as the
// tracker's applyPatches does: a rule without a selector matches nothing,
// nil driver, pool and device fields match any.
func applyTaintRules(slice *resourceapi.ResourceSlice, rules []*resourceapi.DeviceTaintRule) *resourceapi.ResourceSlice {
	patched := slice
	for _, r := range rules {
		sel := r.Spec.DeviceSelector
		if sel == nil {
			continue
		}
		if sel.Driver != nil && *sel.Driver != slice.Spec.Driver {
			continue
		}
		if sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name {
			continue
		}
		for i, d := range slice.Spec.Devices {
			if sel.Device != nil && *sel.Device != d.Name {
				continue
			}
			if patched == slice {
				patched = slice.DeepCopy()
			}
			patched.Spec.Devices[i].Taints = append(patched.Spec.Devices[i].Taints, r.Spec.Taint)
		}
	}
	return patched
}
