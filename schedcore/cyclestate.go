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
	// filters are the profile's filter plugins minus SkipFilterPlugins,
	// computed once after PreFilter so the per-node loop does no lookups.
	filters    []FilterPlugin
	filtersFor *Framework
	// filterViews are the remembered passes of the NodeLocalFilters among
	// filters (aligned with them; remembered[i] says whether filters[i]
	// has a view this cycle).
	filterViews []VerdictView
	remembered  []bool
	// filterRejects are the remembered rejections' statuses of those
	// filters (aligned with filters, as filterViews).
	filterRejects []*rejectTable
	// listed says where the feasible nodes findNodesThatPassFilters
	// found are in the snapshot's list, for RunScorePlugins.
	listed listedNodes
	// noNominatedPods is set when no pod is nominated anywhere this cycle,
	// so the per-node nominated-pods check is skipped.
	noNominatedPods bool
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
	// SkipAllPostFilter disables PostFilter for this cycle.
	SkipAllPostFilter bool
	// ReuseScoreBuffers lets RunScorePlugins score into the framework's
	// buffers of the previous cycle instead of allocating; SchedulePod
	// then keeps only the chosen and runner-up nodes' scores (copied) in
	// its result. The scheduler loop sets it; Explain, which keeps every
	// node's scores, does not.
	ReuseScoreBuffers bool
	// DiagnoseFailuresOnly says that the caller reads a successful
	// cycle's Diagnosis for nothing but the nodes evaluated
	// (ScheduleResult.EvaluatedNodes): a filter pass that finds some
	// node then counts the rejected nodes instead of recording each one's
	// status and plugin (most of the cost of a node rejected by a
	// remembered verdict); a pass that finds none filters the nodes
	// again, recording them, so that a failure's diagnosis is kube's.
	// The scheduler loop sets it (it releases a successful cycle's
	// diagnosis unread); Explain, which shows every node's status, does
	// not.
	DiagnoseFailuresOnly bool
	// scoreBufs is the framework whose buffers this cycle holds.
	scoreBufs *Framework
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
	n := &CycleState{storage: make([]stateEntry, len(c.storage), max(len(c.storage), 16)), RecordPluginMetrics: c.RecordPluginMetrics, SkipAllPostFilter: c.SkipAllPostFilter,
		filters: c.filters, filtersFor: c.filtersFor, filterViews: c.filterViews, remembered: c.remembered, filterRejects: c.filterRejects, noNominatedPods: c.noNominatedPods}
	for i, e := range c.storage {
		n.storage[i].key = e.key
		if e.val != nil {
			n.storage[i].val = e.val.Clone()
		}
	}
	n.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	n.SkipScorePlugins = c.SkipScorePlugins.Clone()
	n.SkipPreBindPlugins = c.SkipPreBindPlugins.Clone()
	return n
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
	return c.listed.positions(snap, nodes) != nil
}
