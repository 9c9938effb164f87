package schedcore

import v1 "k8s.io/api/core/v1"

// nodeTree orders nodes the way kube-scheduler's snapshot lists them: zones in
// order of first appearance, and the list interleaves zones round-robin, so
// that sampling a prefix of nodes spreads over zones.
type nodeTree struct {
	zones    []string
	tree     map[string][]string
	numNodes int
	cached   []string
	valid    bool
}

func newNodeTree() *nodeTree { return &nodeTree{tree: map[string][]string{}} }

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
	names, ok := t.tree[z]
	if !ok {
		t.zones = append(t.zones, z)
	}
	for _, x := range names {
		if x == n.Name {
			return
		}
	}
	t.tree[z] = append(names, n.Name)
	t.numNodes++
	t.valid = false
}

func (t *nodeTree) remove(n *v1.Node) {
	z := ZoneKey(n)
	names := t.tree[z]
	for i, x := range names {
		if x == n.Name {
			t.tree[z] = append(names[:i:i], names[i+1:]...)
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
