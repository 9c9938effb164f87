package schedcore

import (
	"errors"

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
	storage map[StateKey]StateData
	// SkipFilterPlugins are filter plugins whose PreFilter returned Skip.
	SkipFilterPlugins sets.Set[string]
	// SkipScorePlugins are score plugins whose PreScore returned Skip.
	SkipScorePlugins sets.Set[string]
	// SkipPreBindPlugins are prebind plugins whose PreBindPreFlight returned Skip.
	SkipPreBindPlugins sets.Set[string]
	// RecordPluginMetrics is set in the sampled cycles that time every plugin.
	RecordPluginMetrics bool
	// SkipAllPostFilter disables PostFilter for this cycle.
	SkipAllPostFilter bool
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState { return &CycleState{storage: make(map[StateKey]StateData, 8)} }

// Read returns the data under key or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if v, ok := c.storage[key]; ok {
		return v, nil
	}
	return nil, ErrNotFound
}

// Write stores data under key.
func (c *CycleState) Write(key StateKey, val StateData) { c.storage[key] = val }

// Delete removes key.
func (c *CycleState) Delete(key StateKey) { delete(c.storage, key) }

// Clone deep-copies the state through each value's Clone.
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	n := &CycleState{storage: make(map[StateKey]StateData, len(c.storage)), RecordPluginMetrics: c.RecordPluginMetrics, SkipAllPostFilter: c.SkipAllPostFilter}
	for k, v := range c.storage {
		if v == nil {
			n.storage[k] = nil
			continue
		}
		n.storage[k] = v.Clone()
	}
	n.SkipFilterPlugins = c.SkipFilterPlugins.Clone()
	n.SkipScorePlugins = c.SkipScorePlugins.Clone()
	n.SkipPreBindPlugins = c.SkipPreBindPlugins.Clone()
	return n
}

// ReadAs reads key and asserts its type; a missing key or wrong type is an error
// naming the key.
func ReadAs[T StateData](c *CycleState, key StateKey) (T, error) {
	var zero T
	v, err := c.Read(key)
	if err != nil {
		return zero, errors.New("reading " + string(key) + " from cycleState: " + err.Error())
	}
	t, ok := v.(T)
	if !ok {
		return zero, errors.New("invalid type for " + string(key) + " in cycleState")
	}
	return t, nil
}
