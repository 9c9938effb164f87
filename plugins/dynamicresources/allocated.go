package dynamicresources

import (
	"slices"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// classLister serves the allocator's DeviceClassLister from the manager.
type classLister struct{ m *schedcore.DRAManager }

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l.m.Class(name); ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

func (l classLister) List() ([]*resourceapi.DeviceClass, error) { return l.m.Classes(), nil }

// allocatedStates keeps the allocator's view of what is taken from the
// manager's allocations (stored, assumed and in flight), as kube's claim
// tracker does with GatherAllocatedState, up to date incrementally: only
// the allocations that came or went since the last cycle are applied. The allocator only reads the state, and each
// cycle's allocator is done (Filter) before the next PreFilter asks for
// it, so it is updated in place. Each pool's version counts the changes
// of what is allocated in it (the allocation memo's key).
type allocatedStates struct {
	mu sync.Mutex
	m  *schedcore.DRAManager
	// seq is the manager's allocation change number the state is of.
	seq         int64
	state       *structured.AllocatedState
	consumable  bool
	contrib     map[*resourceapi.AllocationResult]contribution
	poolVersion map[string]int64
	// poolItems counts, per pool, what is allocated in it by device name
	// ("d:" a device, "c:" a consumed capacity, "s:" a share), for the
	// memo's name-independent pool signatures.
	poolItems map[string]map[string]int
	// changes logs, per pool, each version's change (monotone.go).
	changes map[string][]poolChange
	// countered counts the changes in pools with shared counters
	// (counterPools, of counterRev; reuse.go).
	countered    int64
	counterPools map[string]bool
	counterRev   int64
}

// contribution is what one allocation adds to the state.
type contribution struct {
	devices []structured.DeviceID
	shared  []structured.SharedDeviceID
	caps    []structured.DeviceConsumedCapacity
	pools   []string
	// items are the poolItems entries, by pool.
	items [][2]string
}

// get returns the current allocated state and the pools' versions. With
// consumableCapacity off, shared allocations count as dedicated ones
// (kube's legacy model). It applies the manager's allocation changes since
// the last call (AllocationChanges), reading every allocation only the
// first time or when the manager no longer keeps the changes.
func (a *allocatedStates) get(consumableCapacity bool) (*structured.AllocatedState, map[string]int64, map[string]map[string]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == nil || consumableCapacity != a.consumable {
		a.state = &structured.AllocatedState{
			AllocatedDevices:         sets.New[structured.DeviceID](),
			AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
			AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
		}
		a.contrib = map[*resourceapi.AllocationResult]contribution{}
		a.poolItems = map[string]map[string]int{}
		// The versions below count on without a logged change.
		a.changes = map[string][]poolChange{}
		if a.poolVersion == nil {
			a.poolVersion = map[string]int64{}
		}
		// Versions go on counting: an earlier (pool, version) never
		// names other contents.
		for p := range a.poolVersion {
			a.poolVersion[p]++
		}
		a.consumable = consumableCapacity
		allocs, seq := a.m.AllocationSet()
		for _, alloc := range allocs {
			a.addLocked(alloc)
		}
		a.seq = seq
		return a.state, a.poolVersion, a.poolItems
	}
	changes, seq, ok := a.m.AllocationChanges(a.seq)
	if !ok {
		allocs, s := a.m.AllocationSet()
		current := make(map[*resourceapi.AllocationResult]struct{}, len(allocs))
		for _, alloc := range allocs {
			current[alloc] = struct{}{}
		}
		for alloc := range a.contrib {
			if _, ok := current[alloc]; !ok {
				a.removeLocked(alloc)
			}
		}
		for _, alloc := range allocs {
			a.addLocked(alloc)
		}
		seq = s
	}
	// The net changes, removals first, as a diff of the two sets: an
	// allocation replaced by an equal one (a claim written back) holds
	// the same devices, which removing it after adding the other would
	// free.
	net := make(map[*resourceapi.AllocationResult]bool, len(changes))
	for _, ch := range changes {
		net[ch.Allocation] = ch.Added
	}
	for _, ch := range changes {
		if !net[ch.Allocation] {
			a.removeLocked(ch.Allocation)
		}
	}
	for _, ch := range changes {
		if net[ch.Allocation] {
			a.addLocked(ch.Allocation)
		}
	}
	a.seq = seq
	return a.state, a.poolVersion, a.poolItems
}

// removeLocked takes an allocation's contribution out of the state.
func (a *allocatedStates) removeLocked(alloc *resourceapi.AllocationResult) {
	c, ok := a.contrib[alloc]
	if !ok {
		return
	}
	s := a.state
	for _, id := range c.devices {
		s.AllocatedDevices.Delete(id)
	}
	for _, id := range c.shared {
		s.AllocatedSharedDeviceIDs.Delete(id)
	}
	for _, cc := range c.caps {
		s.AggregatedCapacity.Remove(cc)
	}
	for _, p := range c.pools {
		a.poolVersion[p]++
		a.logLocked(p, poolChange{ver: a.poolVersion[p], removed: true})
		a.touchedLocked(p)
	}
	for _, it := range c.items {
		m := a.poolItems[it[0]]
		if m[it[1]]--; m[it[1]] <= 0 {
			delete(m, it[1])
		}
	}
	delete(a.contrib, alloc)
}

// addLocked adds an allocation's contribution to the state (once).
func (a *allocatedStates) addLocked(alloc *resourceapi.AllocationResult) {
	if _, ok := a.contrib[alloc]; ok {
		return
	}
	s := a.state
	consumableCapacity := a.consumable
	var c contribution
	item := func(id structured.DeviceID, v string) {
		c.items = append(c.items, [2]string{id.Driver.String() + "/" + id.Pool.String(), v})
	}
	foreachAllocatedDevice(alloc, consumableCapacity,
		func(id structured.DeviceID) {
			c.devices = append(c.devices, id)
			s.AllocatedDevices.Insert(id)
			item(id, "d:"+id.Device.String())
		},
		func(id structured.SharedDeviceID) {
			c.shared = append(c.shared, id)
			s.AllocatedSharedDeviceIDs.Insert(id)
			item(id.GetDeviceID(), "s:"+id.Device.String()+"/"+id.ShareID.String())
		},
		func(cc structured.DeviceConsumedCapacity) {
			c.caps = append(c.caps, cc)
			s.AggregatedCapacity.Insert(cc)
			names := make([]string, 0, len(cc.ConsumedCapacity))
			for n := range cc.ConsumedCapacity {
				names = append(names, string(n))
			}
			slices.Sort(names)
			v := "c:" + cc.DeviceID.Device.String()
			for _, n := range names {
				q := cc.ConsumedCapacity[resourceapi.QualifiedName(n)]
				v += "," + n + "=" + q.String()
			}
			item(cc.DeviceID, v)
		})
	for _, it := range c.items {
		m := a.poolItems[it[0]]
		if m == nil {
			m = map[string]int{}
			a.poolItems[it[0]] = m
		}
		m[it[1]]++
	}
	for _, r := range alloc.Devices.Results {
		p := r.Driver + "/" + r.Pool
		if !slices.Contains(c.pools, p) {
			c.pools = append(c.pools, p)
			a.poolVersion[p]++
			a.logLocked(p, c.taken(p, a.poolVersion[p]))
			a.touchedLocked(p)
		}
	}
	a.contrib[alloc] = c
}

// foreachAllocatedDevice is kube's helper of the same name: devices
// allocated with admin access are not taken; with consumable capacity a
// result with a share ID is a shared allocation (with its consumed
// capacity), any other one a dedicated device.
func foreachAllocatedDevice(alloc *resourceapi.AllocationResult, consumableCapacity bool,
	dedicated func(structured.DeviceID), shared func(structured.SharedDeviceID), consumed func(structured.DeviceConsumedCapacity)) {
	for _, r := range alloc.Devices.Results {
		if ptr.Deref(r.AdminAccess, false) {
			continue
		}
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if consumableCapacity && r.ShareID != nil {
			shared(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				consumed(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
			continue
		}
		dedicated(id)
	}
}
