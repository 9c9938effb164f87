package dynamicresources

// What explanations keep while the cluster's slices stay the same: which
// slices a node may see, the generations of each pool, the node selectors
// compiled, and the selectors' verdicts on devices of the same content.

import (
	"context"
	"encoding/json"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/utils/ptr"
)

// poolKey names a pool: its driver and its name.
type poolKey struct{ driver, pool string }

// explainSlices finds, for one node, the slices of a cycle that
// gatherDevices must consider, without matching every slice against every
// node. A slice naming a node (spec.nodeName) matches that node only (the
// allocator's NodeMatches compares the names): it is filed under the
// name; every other slice (all nodes, a node selector, per-device
// selection) is a candidate for every node.
type explainSlices struct {
	// of is the slice list the index was built from.
	of []*resourceapi.ResourceSlice
	// byNode are the positions in of of the slices naming each node;
	// rest those of the slices naming none. Both ascend.
	byNode map[string][]int32
	rest   []int32
	// pools are each pool's newest generation and its count of slices
	// per generation, over every slice of the list.
	pools map[poolKey]*poolGenerations
	// selectors are the compiled node selectors of the slices of rest
	// that have one (nil: it does not compile, and matches no node).
	selectors map[*resourceapi.ResourceSlice]*nodeaffinity.NodeSelector
}

type poolGenerations struct {
	newest int64
	count  map[int64]int
}

func newExplainSlices(all []*resourceapi.ResourceSlice) *explainSlices {
	x := &explainSlices{of: all, byNode: map[string][]int32{}, pools: map[poolKey]*poolGenerations{},
		selectors: map[*resourceapi.ResourceSlice]*nodeaffinity.NodeSelector{}}
	for i, s := range all {
		if name := ptr.Deref(s.Spec.NodeName, ""); name != "" {
			x.byNode[name] = append(x.byNode[name], int32(i))
		} else {
			x.rest = append(x.rest, int32(i))
			if s.Spec.NodeSelector != nil {
				sel, err := nodeaffinity.NewNodeSelector(s.Spec.NodeSelector)
				if err != nil {
					sel = nil
				}
				x.selectors[s] = sel
			}
		}
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		p := x.pools[k]
		if p == nil {
			p = &poolGenerations{newest: s.Spec.Pool.Generation, count: map[int64]int{}}
			x.pools[k] = p
		}
		p.newest = max(p.newest, s.Spec.Pool.Generation)
		p.count[s.Spec.Pool.Generation]++
	}
	return x
}

// indexes reports whether the index was built from the list all (the
// same slices, in the same order: a cycle's list is never changed in
// place, a new one is made).
func (x *explainSlices) indexes(all []*resourceapi.ResourceSlice) bool {
	return x != nil && len(x.of) == len(all) && (len(all) == 0 || &x.of[0] == &all[0])
}

// candidates calls f for the slices the node named node may see, in
// list order.
func (x *explainSlices) candidates(node string, f func(s *resourceapi.ResourceSlice)) {
	own, rest := x.byNode[node], x.rest
	for len(own) > 0 || len(rest) > 0 {
		if len(rest) == 0 || (len(own) > 0 && own[0] < rest[0]) {
			f(x.of[own[0]])
			own = own[1:]
			continue
		}
		f(x.of[rest[0]])
		rest = rest[1:]
	}
}

// matches is the allocator's NodeMatches for a slice of the list, whole
// (not per device): a slice naming a node matches that node, one for all
// nodes every node, one with a node selector the nodes it selects (none
// when it does not compile), any other none. It is what
// structured.NodeMatches does in each of its implementations, with the
// selector compiled once.
func (x *explainSlices) matches(s *resourceapi.ResourceSlice, node *v1.Node) bool {
	switch nodeName := ptr.Deref(s.Spec.NodeName, ""); {
	case nodeName != "":
		return node != nil && node.Name == nodeName
	case ptr.Deref(s.Spec.AllNodes, false):
		return true
	case s.Spec.NodeSelector != nil:
		sel, ok := x.selectors[s]
		if !ok {
			var err error
			if sel, err = nodeaffinity.NewNodeSelector(s.Spec.NodeSelector); err != nil {
				return false
			}
		}
		return sel != nil && sel.Match(node)
	}
	return false
}

// explainCache is what the plugin's explanations keep from one to the
// next while the cycle's slice list is the same one (the DRAManager makes
// a new list when a slice, class or taint rule changes): the slices'
// index, and the CEL selectors' verdicts per device content.
type explainCache struct {
	mu     sync.Mutex
	slices *explainSlices
	// content numbers each device of the list by its content as CEL sees
	// it (driver, attributes, capacity, allowMultipleAllocations);
	// contents finds the number of a content.
	content  map[*resourceapi.Device]int32
	contents map[string]int32
	// verdicts are the selectors' results by expression and content.
	verdicts map[celKey]celVerdict
}

type celKey struct {
	expr    string
	content int32
}

type celVerdict struct {
	ok  bool
	err error
}

// index returns the index of the slice list all, made again when the list
// is not the one it was built from; everything kept of the previous list
// is dropped then.
func (c *explainCache) index(all []*resourceapi.ResourceSlice) *explainSlices {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.slices.indexes(all) {
		c.slices = newExplainSlices(all)
		c.content, c.contents, c.verdicts = map[*resourceapi.Device]int32{}, map[string]int32{}, map[celKey]celVerdict{}
	}
	return c.slices
}

// deviceMatches is expr.DeviceMatches on the device, remembered per
// expression and device content for the slice list x: devices alike on
// many nodes are evaluated once.
func (c *explainCache) deviceMatches(ctx context.Context, x *explainSlices, expr cel.CompilationResult, source string, d *nodeDevice) (bool, error) {
	in := cel.Device{Driver: d.slice.Spec.Driver, AllowMultipleAllocations: d.dev.AllowMultipleAllocations, Attributes: d.dev.Attributes, Capacity: d.dev.Capacity}
	c.mu.Lock()
	if c.slices != x {
		// Another list is being explained: no remembering for this one.
		c.mu.Unlock()
		ok, _, err := expr.DeviceMatches(ctx, in)
		return ok, err
	}
	id, known := c.content[d.dev]
	if !known {
		c.mu.Unlock()
		b, err := json.Marshal(in)
		c.mu.Lock()
		if err != nil || c.slices != x {
			c.mu.Unlock()
			ok, _, err := expr.DeviceMatches(ctx, in)
			return ok, err
		}
		if id, known = c.contents[string(b)]; !known {
			id = int32(len(c.contents))
			c.contents[string(b)] = id
		}
		c.content[d.dev] = id
	}
	v, done := c.verdicts[celKey{source, id}]
	c.mu.Unlock()
	if done {
		return v.ok, v.err
	}
	ok, _, err := expr.DeviceMatches(ctx, in)
	if err != nil && ctx.Err() != nil {
		return ok, err // cancelled: not the expression's verdict
	}
	c.mu.Lock()
	if c.slices == x {
		c.verdicts[celKey{source, id}] = celVerdict{ok, err}
	}
	c.mu.Unlock()
	return ok, err
}
