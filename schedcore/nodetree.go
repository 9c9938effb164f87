package schedcore

import v1 "k8s.io/api/core/v1"

// nodeTree orders nodes the way kube-scheduler's snapshot lists them: zones in
// order of first appearance, and the list interleaves zones round-robin, so
// that sampling a prefix of nodes spreads over zones.
//
// kube's nodeTree looks for a node in its zone's list before adding it,
// which makes loading N nodes take time in N² (at 100,000 nodes in a few
// zones, seconds of string comparisons); listed answers the same question
// in one lookup.
type nodeTree struct {
	zones []string
	tree  map[string][]string
	// listed holds a (zone key, node name) pair for each name in each
	// zone's list: whether a zone lists a node, without reading the list.
	listed   map[zoneNode]struct{}
	numNodes int
	cached   []string
	valid    bool
}

// zoneNode is a node name in a zone's list.
type zoneNode struct{ zone, name string }

func newNodeTree() *nodeTree {
	return &nodeTree{tree: map[string][]string{}, listed: map[zoneNode]struct{}{}}
}

// ZoneKey returns region + ":\x00:" + zone from the topology labels (and
// their deprecated beta forms), "" when neither is set.
func ZoneKey(node *v1.Node) string {
	l := node.Labels
	if l == nil {
		return ""
	}
	zone := l[v1.LabelTopologyZone]
	if zone == "" {
		zone = l[v1.LabelFailureDomainBetaZone]
	}
	region := l[v1.LabelTopologyRegion]
	if region == "" {
		region = l[v1.LabelFailureDomainBetaRegion]
	}
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

func (t *nodeTree) add(n *v1.Node) {
	z := ZoneKey(n)
	k := zoneNode{z, n.Name}
	if _, ok := t.listed[k]; ok {
		// Listed in this zone already: kube's addNode finds it in the
		// zone's list and leaves the tree as it is (it looks in that
		// zone's list only).
		return
	}
	names, ok := t.tree[z]
	if !ok {
		t.zones = append(t.zones, z)
	}
	t.tree[z] = append(names, n.Name)
	t.listed[k] = struct{}{}
	t.numNodes++
	t.valid = false
}

func (t *nodeTree) remove(n *v1.Node) {
	z := ZoneKey(n)
	if _, ok := t.listed[zoneNode{z, n.Name}]; !ok {
		return
	}
	names := t.tree[z]
	for i, x := range names {
		if x == n.Name {
			t.tree[z] = append(names[:i:i], names[i+1:]...)
			delete(t.listed, zoneNode{z, n.Name})
			t.numNodes--
			if len(t.tree[z]) == 0 {
				delete(t.tree, z)
				for j, zz := range t.zones {
					if zz == z {
						t.zones = append(t.zones[:j:j], t.zones[j+1:]...)
						break
					}
				}
			}
			t.valid = false
			return
		}
	}
}

func (t *nodeTree) update(old, n *v1.Node) {
	if ZoneKey(old) == ZoneKey(n) {
		return
	}
	t.remove(old)
	t.add(n)
}

func (t *nodeTree) list() []string {
	if t.valid {
		return t.cached
	}
	out := make([]string, 0, t.numNodes)
	for i := 0; len(out) < t.numNodes; i++ {
		for _, z := range t.zones {
			if names := t.tree[z]; i < len(names) {
				out = append(out, names[i])
			}
		}
	}
	t.cached, t.valid = out, true
	return out
}
