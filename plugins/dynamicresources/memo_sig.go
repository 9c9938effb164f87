package dynamicresources

// The memo's signatures: of a pool's content, of a pool with what is taken
// in it, and of a node (its pools, in (driver, pool) order).

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

// poolSigLocked is pool p's interned signature in the cycle: its content
// and what is taken in it, kept by (pool, allocation version), written out
// the first time a node with the pool misses. in.poolItems is of the
// versions in in.poolVer (the next PreFilter updates both, after the
// cycle's filters).
func (m *allocationMemo) poolSigLocked(in *memoInputs, p string) int64 {
	static, ok := m.staticSig[p]
	if !ok {
		return 0
	}
	at := poolAt{p, in.poolVer[p]}
	id, ok := m.dynSig[at]
	if !ok {
		items := make([]string, 0, len(in.poolItems[p]))
		for it, n := range in.poolItems[p] {
			items = append(items, it+"*"+strconv.Itoa(n))
		}
		sort.Strings(items)
		id = m.internLocked("sig:" + static + "|" + strings.Join(items, ";"))
		m.dynSig[at] = id
	}
	return id
}

// buildStaticSigsLocked writes each pool's slices out without the names
// that differ from node to node.
func (m *allocationMemo) buildStaticSigsLocked(all []*resourceapi.ResourceSlice) {
	byPool := map[string][]*resourceapi.ResourceSlice{}
	for _, s := range all {
		p := s.Spec.Driver + "/" + s.Spec.Pool.Name
		byPool[p] = append(byPool[p], s)
	}
	for p, ss := range byPool {
		sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
		m.poolSlices[p] = ss
		m.localTo[p] = localNode(ss)
		m.mixed[p] = m.localTo[p] == "" && !uniform(ss)
		specs := make([]resourceapi.ResourceSliceSpec, len(ss))
		unique := false
		for i, sl := range ss {
			// A copy of the spec's top level is enough: only its own
			// fields are cleared.
			spec := sl.Spec
			spec.NodeName, spec.Pool.Name = nil, ""
			if ptr.Deref(spec.PerDeviceNodeSelection, false) {
				unique = true
			}
			specs[i] = spec
		}
		b, err := json.Marshal(specs)
		if err != nil || unique {
			// Devices that pick their nodes: only this pool is like itself.
			m.staticSig[p] = "pool:" + p + "|" + string(b)
		} else {
			m.staticSig[p] = string(b)
		}
		m.staticID[p] = m.internLocked("static:" + m.staticSig[p])
	}
}

// nodeSigsLocked returns the node's signature for the claims whose pools'
// relevance is rel (full: every pool, the relevant ones with what is taken
// in them, the others by content) and the failures' one (fail: without
// the inert pools the claims cannot use; monotone.go: inertPoolLocked).
func (m *allocationMemo) nodeSigsLocked(in *memoInputs, nm *nodeMemo, rel []bool, node *v1.Node) (full, fail string) {
	var b, f strings.Builder
	b.WriteString("nodesig:")
	f.WriteString("failsig:")
	for i, p := range nm.pools {
		start := b.Len()
		if rel[i] {
			b.WriteString(strconv.FormatInt(m.poolSigLocked(in, p), 10))
		} else {
			b.WriteByte('s')
			b.WriteString(strconv.FormatInt(m.staticID[p], 10))
		}
		if m.mixed[p] {
			// What the node sees of the pool depends on the node.
			b.WriteString("@" + node.Name)
		}
		b.WriteByte(',')
		if rel[i] || !m.inertPoolLocked(p) {
			f.WriteString(b.String()[start:])
		}
	}
	return b.String(), f.String()
}
