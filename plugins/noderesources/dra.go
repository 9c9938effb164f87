package noderesources

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// DRA-backed extended resources in scoring (DRAExtendedResource, GA in
// v1.37). A scored resource that the pod requests, that a node does not
// list in its allocatable and that a DeviceClass backs (its
// extendedResourceName, or the implicit deviceclass.resource.kubernetes.io/
// <class>) scores, as in kube's calculateResourceAllocatableRequest, with
// the node's devices of that class as the allocatable and those of them
// that allocated claims hold as the allocated amount.

// draScoring counts, for the scorers of both plugins, the devices of the
// classes backing scored extended resources. Nil when DRAExtendedResource
// is off or the handle has no DRA manager.
type draScoring struct {
	m        *schedcore.DRAManager
	features structured.Features
	cel      *cel.Cache
}

func newDRAScoring(h *schedcore.Handle) *draScoring {
	m := draManager(h)
	if m == nil {
		return nil
	}
	f := h.Features()
	return &draScoring{
		m: m,
		// NodeMatches picks its implementation (stable, incubating) by
		// the allocator's features, as kube's scorer does.
		features: helper.AllocatorFeatures(f),
		cel:      cel.NewCache(10, cel.Features{EnableConsumableCapacity: f.DRAConsumableCapacity}),
	}
}

// draCount is one node's devices of a class and how many are allocated.
type draCount struct{ capacity, allocated int64 }

// draTotals is what PreScore computes once (kube's draPreScoreState,
// evaluated for every node): per scored resource, nil unless a DeviceClass
// backs it and the pod requests it, the devices per node name. A node
// whose count hit an error (a CEL selector that fails, a node selector that
// cannot be evaluated) is absent, as kube's count returns 0, 0 for it.
type draTotals struct {
	byResource []map[string]draCount
	// objects and allocations are the manager's revisions the totals were
	// counted at: the scores' memo key.
	objects, allocations int64
}

// node returns resource i's devices on the node, ok false when DRA does
// not back it there.
func (t *draTotals) node(i int, name string) (draCount, bool) {
	if t == nil || t.byResource[i] == nil {
		return draCount{}, false
	}
	c, ok := t.byResource[i][name]
	return c, ok && c.capacity > 0
}

// key writes the revisions into a scores' memo key: the totals change with
// the slices and classes (objects) and with what claims hold (allocations),
// neither of which changes a node's generation.
func (t *draTotals) key(k *schedcore.MemoKey) {
	if t == nil {
		k.Int(0)
		return
	}
	k.Int(1).Int(t.objects).Int(t.allocations)
}

// totals counts, for each of names that the pod requests (podRequests) and
// a DeviceClass backs, the class's devices on each of nodes: kube's
// calculateDRAResourceTotals over every node at once. Nil when no such
// resource is requested, so that the usual pod pays nothing.
func (d *draScoring) totals(ctx context.Context, names []v1.ResourceName, podRequests []int64, nodes []*schedcore.NodeInfo) *draTotals {
	if d == nil {
		return nil
	}
	var t *draTotals
	var allocated sets.Set[structured.DeviceID]
	for i, name := range names {
		if podRequests[i] == 0 || !isDRAExtendedResourceName(name) {
			continue
		}
		class := d.m.ExtendedResourceClass(name)
		if class == nil {
			continue
		}
		if t == nil {
			// The revisions are read before the objects: a change while
			// counting leaves an older key, never a stale count under a
			// newer one.
			t = &draTotals{byResource: make([]map[string]draCount, len(names)), objects: d.m.ObjectsRevision(), allocations: d.m.AllocationsRevision()}
			allocated = d.allocated()
		}
		t.byResource[i] = d.classTotals(ctx, class, allocated, nodes)
	}
	return t
}

// isDRAExtendedResourceName is kube's IsDRAExtendedResourceName: an
// extended resource name or the implicit name of a class.
func isDRAExtendedResourceName(name v1.ResourceName) bool {
	return schedcore.IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix)
}

// allocated is the devices allocated claims hold (GatherAllocatedState's
// devices, shared or not; admin access takes none), in flight or stored.
func (d *draScoring) allocated() sets.Set[structured.DeviceID] {
	allocs, _ := d.m.Allocations()
	out := sets.New[structured.DeviceID]()
	for _, a := range allocs {
		for _, r := range a.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) {
				continue
			}
			out.Insert(structured.MakeDeviceID(r.Driver, r.Pool, r.Device))
		}
	}
	return out
}

// classCounter counts one class's devices per node name.
type classCounter struct {
	allocated sets.Set[structured.DeviceID]
	out       map[string]draCount
	// failed are the nodes whose count hit an error: kube's count
	// returns 0, 0 for them.
	failed sets.Set[string]
}

func (c *classCounter) add(node, driver, pool string, dev *resourceapi.Device, m deviceMatch) {
	if c.failed.Has(node) {
		return
	}
	if m.err != nil {
		c.failed.Insert(node)
		delete(c.out, node)
		return
	}
	if !m.matches {
		return
	}
	n := c.out[node]
	n.capacity++
	if c.allocated.Has(structured.MakeDeviceID(driver, pool, dev.Name)) {
		n.allocated++
	}
	c.out[node] = n
}

// deviceMatch is whether a device matches a class, or the error that
// deciding it hit.
type deviceMatch struct {
	matches bool
	err     error
}

// classTotals counts one class's devices per node, as kube's loop decides
// for each node which slices and devices are its own: a slice (or, with
// perDeviceNodeSelection, a device) for one node by name counts there; one
// for all nodes or a node selector is matched against each of nodes. The
// class's selectors are evaluated once per device.
func (d *draScoring) classTotals(ctx context.Context, class *resourceapi.DeviceClass, allocated sets.Set[structured.DeviceID], nodes []*schedcore.NodeInfo) map[string]draCount {
	c := &classCounter{allocated: allocated, out: map[string]draCount{}, failed: sets.New[string]()}
	var matches []deviceMatch
	for _, slice := range d.m.Slices() {
		driver, pool := slice.Spec.Driver, slice.Spec.Pool.Name
		matches = matches[:0]
		for j := range slice.Spec.Devices {
			ok, err := d.deviceMatchesClass(ctx, &slice.Spec.Devices[j], class, driver)
			matches = append(matches, deviceMatch{ok, err})
		}
		if ptr.Deref(slice.Spec.PerDeviceNodeSelection, false) {
			for j := range slice.Spec.Devices {
				dev := &slice.Spec.Devices[j]
				name, all := ptr.Deref(dev.NodeName, ""), ptr.Deref(dev.AllNodes, false)
				if !all && name != "" && dev.NodeSelector == nil {
					c.add(name, driver, pool, dev, matches[j])
					continue
				}
				for _, ni := range nodes {
					n := ni.Node()
					switch {
					case all || (name != "" && name == n.Name):
						c.add(n.Name, driver, pool, dev, matches[j])
					case dev.NodeSelector != nil:
						ok, err := structured.NodeMatches(d.features, n, name, all, dev.NodeSelector)
						if err != nil {
							c.add(n.Name, driver, pool, dev, deviceMatch{err: err})
						} else if ok {
							c.add(n.Name, driver, pool, dev, matches[j])
						}
					}
				}
			}
			continue
		}
		name, all := ptr.Deref(slice.Spec.NodeName, ""), ptr.Deref(slice.Spec.AllNodes, false)
		if !all && name != "" && slice.Spec.NodeSelector == nil {
			for j := range slice.Spec.Devices {
				c.add(name, driver, pool, &slice.Spec.Devices[j], matches[j])
			}
			continue
		}
		for _, ni := range nodes {
			n := ni.Node()
			if !all && name != n.Name && slice.Spec.NodeSelector != nil {
				ok, err := structured.NodeMatches(d.features, n, name, all, slice.Spec.NodeSelector)
				if err != nil {
					c.add(n.Name, driver, pool, nil, deviceMatch{err: err})
					continue
				}
				if !ok {
					continue
				}
			}
			for j := range slice.Spec.Devices {
				c.add(n.Name, driver, pool, &slice.Spec.Devices[j], matches[j])
			}
		}
	}
	return c.out
}

// deviceMatchesClass is kube's deviceMatchesClass: every CEL selector of
// the class is true for the device.
func (d *draScoring) deviceMatchesClass(ctx context.Context, dev *resourceapi.Device, class *resourceapi.DeviceClass, driver string) (bool, error) {
	for _, sel := range class.Spec.Selectors {
		if sel.CEL == nil {
			continue
		}
		expr := d.cel.GetOrCompile(sel.CEL.Expression)
		if expr.Error != nil {
			return false, expr.Error
		}
		matches, _, err := expr.DeviceMatches(ctx, cel.Device{Driver: driver, Attributes: dev.Attributes, Capacity: dev.Capacity})
		if err != nil || !matches {
			return false, err
		}
	}
	return true, nil
}
