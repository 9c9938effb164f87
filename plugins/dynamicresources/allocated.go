package dynamicresources

import (
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

// allocatedStates builds the allocator's view of what is taken from the
// manager's allocations (stored, assumed and in flight), as kube's claim
// tracker does with GatherAllocatedState, and keeps it while the
// manager's allocations revision does not change: the allocator only
// reads it, so every pod of a run shares one until a placement changes
// what is allocated.
type allocatedStates struct {
	mu       sync.Mutex
	m        *schedcore.DRAManager
	revision int64
	state    *structured.AllocatedState
}

// get returns the current allocated state. With consumableCapacity off,
// shared allocations count as dedicated ones (kube's legacy model).
func (a *allocatedStates) get(consumableCapacity bool) *structured.AllocatedState {
	a.mu.Lock()
	defer a.mu.Unlock()
	allocs, rev := a.m.Allocations()
	if a.state != nil && rev == a.revision {
		return a.state
	}
	s := &structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, alloc := range allocs {
		foreachAllocatedDevice(alloc, consumableCapacity,
			func(id structured.DeviceID) { s.AllocatedDevices.Insert(id) },
			func(id structured.SharedDeviceID) { s.AllocatedSharedDeviceIDs.Insert(id) },
			func(c structured.DeviceConsumedCapacity) { s.AggregatedCapacity.Insert(c) })
	}
	a.state, a.revision = s, rev
	return s
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
