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

// nodeSigLocked returns the node's signature for the claims whose pools'
// relevance is rel: every pool, the relevant ones with what is taken in
// them, the others by content.
func (m *allocationMemo) nodeSigLocked(in *memoInputs, nm *nodeMemo, rel []bool, node *v1.Node) string {
	var b strings.Builder
	b.WriteString("nodesig:")
	for i, p := range nm.pools {
		m.writePoolSigLocked(&b, in, p, rel[i], node)
	}
	return b.String()
}

// failSigLocked returns the node's signature without the inert pools the
// claims cannot use (monotone.go: inertPoolLocked): the allocator answers
// as if the node did not see them, so failures and successes are shared
// between nodes that differ only in such pools (a zone's FPGAs for a GPU
// claim); kept are the pools it names, in order.
func (m *allocationMemo) failSigLocked(in *memoInputs, nm *nodeMemo, rel []bool, node *v1.Node) (string, keptPools) {
	var f strings.Builder
	f.WriteString("failsig:")
	kept := keptPools{pools: make([]string, 0, len(nm.pools)), rel: make([]bool, 0, len(nm.pools))}
	for i, p := range nm.pools {
		if !rel[i] && m.inertPoolLocked(p) {
			continue
		}
		kept.pools, kept.rel = append(kept.pools, p), append(kept.rel, rel[i])
		m.writePoolSigLocked(&f, in, p, rel[i], node)
	}
	return f.String(), kept
}

// writePoolSigLocked writes pool p as the node sees it: with what is taken
// in it when it is relevant to the claims, by content otherwise.
func (m *allocationMemo) writePoolSigLocked(b *strings.Builder, in *memoInputs, p string, relevant bool, node *v1.Node) {
	if relevant {
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
}
