package schedcore

import (
	"errors"
	"fmt"
	"unsafe"

	"k8s.io/apimachinery/pkg/util/sets"
)

// ErrNotFound is returned by CycleState.Read for a missing key.
var ErrNotFound = errors.New("not found")

// StateKey names a piece of per-cycle data; by convention "PreFilter"+plugin.
type StateKey string

// StateData is per-cycle plugin data. Clone must deep-copy whatever
// AddPod/RemovePod may change, since preemption and nominated-pod checks
// run on clones.
type StateData interface {
	Clone() StateData
}

// CycleState carries data between extension points within one scheduling
// cycle. Writes happen only in serial phases (PreFilter, PreScore, Reserve);
// the parallel Filter and Score loops only read, so no lock is needed.
type CycleState struct {
	// storage is a short list, not a map: a cycle holds about a dozen
	// entries, read once per plugin per node, and a linear scan comparing
	// keys beats hashing them.
	storage []stateEntry
	// runner is what the framework's runner keeps for this cycle (its
	// filter set, the filter loop's list positions, its score buffers):
	// the runtime's own struct, opaque here, so that no runner flag or
	// cache is a field plugins could see or set.
	runner RunnerState
	// SkipFilterPlugins are filter plugins whose PreFilter returned Skip.
	// RunPreFilterPlugins shares the set with the cycles skipping the same
	// plugins: read it, never change it.
	SkipFilterPlugins sets.Set[string]
	// SkipScorePlugins are score plugins whose PreScore returned Skip.
	SkipScorePlugins sets.Set[string]
	// SkipPreBindPlugins are prebind plugins whose PreBindPreFlight returned Skip.
	SkipPreBindPlugins sets.Set[string]
	// RecordPluginMetrics is set in the sampled cycles that time every plugin.
	RecordPluginMetrics bool
	// podGroupState is the state of the pod-group cycle this member's
	// cycle is part of (nil outside one, and once the member has left the
	// group cycle for its binding); placementState is the state of the
	// placement being tried (or, on a pod group's own state, of its parent
	// placement; nil without one).
	podGroupState  *CycleState
	placementState *CycleState
}

type stateEntry struct {
	key StateKey
	val StateData
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState { return &CycleState{storage: make([]stateEntry, 0, 16)} }

// Read returns the data under key or ErrNotFound. It scans from the
// newest entry: the score loop reads what PreScore wrote last, and a key
// is found by its constant's string data before any bytes are compared.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	kp, kl := unsafe.StringData(string(key)), len(key)
	for i := len(c.storage) - 1; i >= 0; i-- {
		if e := &c.storage[i]; len(e.key) == kl && unsafe.StringData(string(e.key)) == kp {
			return e.val, nil
		}
	}
	for i := len(c.storage) - 1; i >= 0; i-- {
		if c.storage[i].key == key {
			return c.storage[i].val, nil
		}
	}
	return nil, ErrNotFound
}

// Write stores data under key.
func (c *CycleState) Write(key StateKey, val StateData) {
	for i := range c.storage {
		if c.storage[i].key == key {
			c.storage[i].val = val
			return
		}
	}
	c.storage = append(c.storage, stateEntry{key, val})
}

// Delete removes key.
func (c *CycleState) Delete(key StateKey) {
	for i := range c.storage {
		if c.storage[i].key == key {
			c.storage = append(c.storage[:i], c.storage[i+1:]...)
			return
		}
	}
}

// Clone deep-copies the state through each value's Clone.
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	n := &CycleState{storage: make([]stateEntry, len(c.storage), max(len(c.storage), 16)), RecordPluginMetrics: c.RecordPluginMetrics}
	if c.runner != nil {
		n.runner = c.runner.CloneRunnerState()
	}
	for i, e := range c.storage {
		n.storage[i].key = e.key
		if e.val != nil {
			n.storage[i].val = e.val.Clone()
		}
	}
	n.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	n.SkipScorePlugins = c.SkipScorePlugins.Clone()
	n.SkipPreBindPlugins = c.SkipPreBindPlugins.Clone()
	n.podGroupState, n.placementState = c.podGroupState, c.placementState
	return n
}

// IsPodGroupSchedulingCycle reports whether this is a member's state in a
// pod-group cycle (kube's CycleState.IsPodGroupSchedulingCycle): false
// for a single pod, and for a member once its group cycle handed it to
// binding. Only with GenericWorkload on can it be true.
func (c *CycleState) IsPodGroupSchedulingCycle() bool { return c != nil && c.podGroupState != nil }

// PodGroupSchedulingCycle returns the state of the pod-group cycle this
// member's cycle is part of, nil outside one (kube's
// GetPodGroupSchedulingCycle).
func (c *CycleState) PodGroupSchedulingCycle() *CycleState {
	if c == nil {
		return nil
	}
	return c.podGroupState
}

// SetPodGroupSchedulingCycle marks a member's state as part of a pod-group
// cycle with the group's state; nil unmarks it. Only the runtime sets it.
func (c *CycleState) SetPodGroupSchedulingCycle(podGroupState *CycleState) {
	c.podGroupState = podGroupState
}

// PlacementCycleState returns the state of the placement a member is
// tried in, nil outside a placement (kube's GetPlacementCycleState).
func (c *CycleState) PlacementCycleState() *CycleState {
	if c == nil {
		return nil
	}
	return c.placementState
}

// ParentPlacementCycleState returns, on a pod group's state, the state of
// its parent placement (kube's GetParentPlacementCycleState; nil without
// CompositePodGroup). It is the field PlacementCycleState reads: the two
// are never asked of one state.
func (c *CycleState) ParentPlacementCycleState() *CycleState { return c.PlacementCycleState() }

// SetPlacementCycleState sets the placement's state (on a member's state)
// or the parent placement's (on a group's). Only the runtime sets it.
func (c *CycleState) SetPlacementCycleState(placementState *CycleState) {
	c.placementState = placementState
}

// Lookup reads key as a T; ok is false when it is missing or of another
// type. It does not allocate, for state a plugin may do without.
func Lookup[T StateData](c *CycleState, key StateKey) (T, bool) {
	v, err := c.Read(key)
	if err != nil {
		var zero T
		return zero, false
	}
	t, ok := v.(T)
	return t, ok
}

// ReadAs reads key and asserts its type; a missing key or wrong type is an
// error naming the key, in kube's words (`reading "PreFilterNodePorts"
// from cycleState: not found`; it wraps ErrNotFound).
func ReadAs[T StateData](c *CycleState, key StateKey) (T, error) {
	var zero T
	v, err := c.Read(key)
	if err != nil {
		return zero, fmt.Errorf("reading %q from cycleState: %w", key, err)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%+v convert to %s state error", v, key)
	}
	return t, nil
}

// FeasibleListed reports whether nodes are the feasible nodes this cycle's
// filter loop found in snap's list, snap unchanged since (PreScore's and
// Score's nodes): each of them is then a node of snap's list, so a pass
// over them may stop once it has learnt what the list's label columns
// already tell (DomainCounts.Complete).
func (c *CycleState) FeasibleListed(snap *Snapshot, nodes []*NodeInfo) bool {
	return c.runner != nil && c.runner.ListedPositions(snap, nodes) != nil
}

// RunnerState is what the framework's runner (schedcore/runtime) keeps for
// one cycle, carried by the cycle's CycleState: the runtime's private
// struct behind the two questions the API asks of it. Plugins have no use
// for it; they ask CycleState.FeasibleListed.
type RunnerState interface {
	// ListedPositions returns the list positions in snap of nodes, when
	// nodes are the feasible nodes this cycle's filter loop found in
	// snap's list and snap has not changed since; nil otherwise
	// (CycleState.FeasibleListed).
	ListedPositions(snap *Snapshot, nodes []*NodeInfo) []int32
	// CloneRunnerState returns what a clone of the cycle state carries
	// (the filter set, never the cycle's list positions or buffers).
	CloneRunnerState() RunnerState
}

// Runner returns the runner's state of this cycle, nil before the
// runtime set one. Only the runtime reads it.
func (c *CycleState) Runner() RunnerState { return c.runner }

// SetRunner sets the runner's state of this cycle. Only the runtime sets
// it.
func (c *CycleState) SetRunner(r RunnerState) { c.runner = r }

// Reset empties the state for another cycle, keeping the room of its
// entry list: the scheduler loop reuses one state from cycle to cycle.
// The runner's state is dropped; the runtime resets and sets it again.
func (c *CycleState) Reset() {
	storage := c.storage
	clear(storage)
	*c = CycleState{storage: storage[:0]}
}
