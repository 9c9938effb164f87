package schedcore

import (
	"slices"
	"sync/atomic"
)

// Domain is a topology domain of one key of a DomainCounts: a label value,
// by a small id.
type Domain int32

// NoDomain is the domain of a value no node has.
const NoDomain Domain = -1

// NoLabel is what NodeDomains gives for a key whose label the node lacks.
const NoLabel Domain = -2

// DomainCounts is a cycle's counts per topology domain (per value of a
// topology key), for a few keys: the pods a spread constraint's selector
// matches per zone, the pods an affinity term matches per domain. Domains
// are the values' ids in the snapshot's label columns, so a count summed
// over thousands of nodes, and a node's domain read in Filter and Score,
// never touch a node's label map; plugins address domains through nodes
// and values, never through list positions.
//
// A domain is counted once Add has touched it (even with 0): kube's maps
// hold only the domains of the nodes that count, and minimums and domain
// numbers are over those.
//
// Clone is copy-on-write: a clone shares the counts until one side adds
// to a key, so AddPod and RemovePod on the clones the framework makes (for
// nominated pods and preemption) copy only what they change, and every
// copy keeps the dense form. Reads may run in parallel; each copy is
// written by one goroutine at a time.
type DomainCounts struct {
	snap *Snapshot
	keys []domainKey
}

type domainKey struct {
	name string
	col  *labelColumn
	// data is nil until the first write.
	data *domainData
}

// domainData is one key's counts, shared by the copies of a DomainCounts
// until one of them writes.
type domainData struct {
	// refs counts the copies sharing the data; a copy writes in place only
	// when it is the one.
	refs    atomic.Int32
	counts  []int64
	counted []bool
	// sparse, when not nil, holds the counts instead of counts and
	// counted, every domain in it counted: a key of many values (the
	// hostname) of which a cycle counts a few (the nodes holding some
	// pods) then costs no two arrays as long as the values. size is then
	// the number of domain ids (len(counts) in the dense form). It turns
	// dense once it holds more than size/sparseShare domains.
	sparse map[Domain]int64
	size   int
	// present, when not nil (sparse counts Load made), has the bits of
	// the domains sparse holds set, by id, for the ids below its length:
	// At and Counted skip the map lookup for the others.
	present []uint64
	// numCounted is the number of counted domains; nonZero the number of
	// domains whose count is not 0.
	numCounted, nonZero int
	// extra are the values no node of the list has (a node from outside
	// it), with ids from col.NumValues() on; values are them by id -
	// col.NumValues().
	extra  map[string]Domain
	values []string
}

// NewDomainCounts returns zero counts for the keys over snap's nodes (a
// key may repeat: each gets its own counts).
func NewDomainCounts(snap *Snapshot, keys ...string) *DomainCounts {
	d := &DomainCounts{snap: snap, keys: make([]domainKey, 0, len(keys))}
	for _, k := range keys {
		d.AddKey(k)
	}
	return d
}

// AddKey adds a key with zero counts and returns its index.
func (d *DomainCounts) AddKey(name string) int {
	d.keys = append(d.keys, domainKey{name: name, col: d.snap.column(name)})
	return len(d.keys) - 1
}

// NumKeys is the number of keys.
func (d *DomainCounts) NumKeys() int { return len(d.keys) }

// KeyName is key k's label key.
func (d *DomainCounts) KeyName(k int) string { return d.keys[k].name }

// KeyIndex returns the index of the first key named name, -1 if none.
func (d *DomainCounts) KeyIndex(name string) int {
	for i := range d.keys {
		if d.keys[i].name == name {
			return i
		}
	}
	return -1
}

// NodeDomain returns the node's domain for key k, ok false when the node
// lacks the label. A value no node of the snapshot has (a node from
// outside it) is NoDomain, with ok true: nothing is counted there. It only
// reads, so Filter and Score may call it in parallel.
func (d *DomainCounts) NodeDomain(k int, ni *NodeInfo) (Domain, bool) {
	key := &d.keys[k]
	if i := indexIn(d.snap.nodeInfoList, ni); i >= 0 {
		id := key.col.At(i)
		return Domain(id), id >= 0
	}
	v, ok := ni.Node().Labels[key.name]
	if !ok {
		return NoDomain, false
	}
	return d.ValueDomain(k, v), true
}

// NodeDomains appends the node's domain of every key to dst (pass a
// buffer with room for NumKeys to keep Filter and Score from allocating):
// NoLabel where the node lacks the label, NoDomain for a value no node of
// the snapshot has (a node from outside it). It finds the node once for
// all the keys, so Filter, Score and the counting passes read a node with
// one call; it only reads, so they may call it in parallel. all reports
// whether the node has every key. A nil DomainCounts has no keys.
func (d *DomainCounts) NodeDomains(ni *NodeInfo, dst []Domain) (doms []Domain, all bool) {
	all = true
	if d == nil {
		return dst, all
	}
	if i := indexIn(d.snap.nodeInfoList, ni); i >= 0 {
		for k := range d.keys {
			dom := Domain(d.keys[k].col.At(i))
			if dom < 0 {
				dom, all = NoLabel, false
			}
			dst = append(dst, dom)
		}
		return dst, all
	}
	labels := ni.Node().Labels
	for k := range d.keys {
		v, ok := labels[d.keys[k].name]
		if !ok {
			dst, all = append(dst, NoLabel), false
			continue
		}
		dst = append(dst, d.ValueDomain(k, v))
	}
	return dst, all
}

// ValueDomain returns the domain of a value of key k, NoDomain when no
// node has it.
func (d *DomainCounts) ValueDomain(k int, value string) Domain {
	key := &d.keys[k]
	if id, ok := key.col.ID(value); ok {
		return Domain(id)
	}
	if key.data != nil {
		if dom, ok := key.data.extra[value]; ok {
			return dom
		}
	}
	return NoDomain
}

// Value is the label value of a domain of key k.
func (d *DomainCounts) Value(k int, dom Domain) string {
	key := &d.keys[k]
	if n := key.col.NumValues(); int(dom) >= n {
		return key.data.values[int(dom)-n]
	}
	return key.col.Values[dom]
}

// At returns the count of a domain of key k (0 for NoDomain or a domain
// not counted).
func (d *DomainCounts) At(k int, dom Domain) int64 {
	data := d.keys[k].data
	if data == nil || dom < 0 {
		return 0
	}
	if data.sparse != nil {
		if data.absent(dom) {
			return 0
		}
		return data.sparse[dom]
	}
	if int(dom) >= len(data.counts) {
		return 0
	}
	return data.counts[dom]
}

// Counted reports whether the domain of key k has been counted.
func (d *DomainCounts) Counted(k int, dom Domain) bool {
	data := d.keys[k].data
	if data != nil && data.sparse != nil {
		if dom < 0 || data.absent(dom) {
			return false
		}
		_, ok := data.sparse[dom]
		return ok
	}
	return data != nil && dom >= 0 && int(dom) < len(data.counted) && data.counted[dom]
}

// NumCounted is the number of counted domains of key k.
func (d *DomainCounts) NumCounted(k int) int {
	if data := d.keys[k].data; data != nil {
		return data.numCounted
	}
	return 0
}

// Labelled reports whether every node of the snapshot's list has key k's
// label.
func (d *DomainCounts) Labelled(k int) bool {
	col := d.keys[k].col
	return col != nil && col.missing == 0 && len(col.ids) == len(d.snap.nodeInfoList)
}

// Complete reports whether key k has counted every domain a node of the
// snapshot's list may be in, and every listed node has the label: adding
// 0 to a listed node's domain (AddAt) then changes nothing. A value no
// listed node has any more (the column keeps the values of earlier
// lists) keeps it from being complete.
func (d *DomainCounts) Complete(k int) bool {
	if !d.Labelled(k) {
		return false
	}
	data, n := d.keys[k].data, d.keys[k].col.NumValues()
	if data == nil || data.numCounted < n {
		return false
	}
	if data.sparse != nil {
		for id := range n {
			if _, ok := data.sparse[Domain(id)]; !ok {
				return false
			}
		}
		return true
	}
	for _, c := range data.counted[:n] {
		if !c {
			return false
		}
	}
	return true
}

// NonZero is the number of domains, over every key, whose count is not 0.
func (d *DomainCounts) NonZero() int {
	n := 0
	for i := range d.keys {
		if data := d.keys[i].data; data != nil {
			n += data.nonZero
		}
	}
	return n
}

// Add adds delta to a domain of key k and counts it.
func (d *DomainCounts) Add(k int, dom Domain, delta int64) {
	if dom < 0 {
		return
	}
	data := d.own(k)
	if data.sparse != nil {
		was, counted := data.sparse[dom]
		data.sparse[dom] = was + delta
		data.mark(dom)
		if was == 0 && was+delta != 0 {
			data.nonZero++
		} else if was != 0 && was+delta == 0 {
			data.nonZero--
		}
		if !counted {
			data.numCounted++
			if len(data.sparse) > data.size/sparseShare {
				data.densify()
			}
		}
		return
	}
	was := data.counts[dom]
	data.counts[dom] += delta
	if was == 0 && data.counts[dom] != 0 {
		data.nonZero++
	} else if was != 0 && data.counts[dom] == 0 {
		data.nonZero--
	}
	if !data.counted[dom] {
		data.counted[dom] = true
		data.numCounted++
	}
}

// AddNode adds delta to the node's domain of key k and returns the
// domain; nothing (ok false) when the node lacks the label.
func (d *DomainCounts) AddNode(k int, ni *NodeInfo, delta int64) (dom Domain, ok bool) {
	dom, ok = d.NodeDomain(k, ni)
	if !ok {
		return NoDomain, false
	}
	if dom == NoDomain {
		dom = d.domainOf(k, ni.Node().Labels[d.keys[k].name])
	}
	d.Add(k, dom, delta)
	return dom, true
}

// AddNodeOrEmpty is AddNode with a node that lacks the label in the domain
// of the value "".
func (d *DomainCounts) AddNodeOrEmpty(k int, ni *NodeInfo, delta int64) {
	if _, ok := d.AddNode(k, ni, delta); !ok {
		d.AddValue(k, "", delta)
	}
}

// AddAt adds delta to the domain dom of key k that NodeDomains gave for
// the node: a node without the label counts in the domain of the value "",
// one whose value no node of the snapshot has in a domain of its own.
func (d *DomainCounts) AddAt(k int, ni *NodeInfo, dom Domain, delta int64) {
	if dom >= 0 {
		d.Add(k, dom, delta)
		return
	}
	d.AddNodeOrEmpty(k, ni, delta)
}

// AddValue adds delta to the domain of a value of key k (one no node has
// gets a domain of its own).
func (d *DomainCounts) AddValue(k int, value string, delta int64) {
	d.Add(k, d.domainOf(k, value), delta)
}

// ForEach calls fn for each counted domain of key k, in id order.
func (d *DomainCounts) ForEach(k int, fn func(dom Domain, count int64)) {
	data := d.keys[k].data
	if data == nil {
		return
	}
	if data.sparse != nil {
		doms := make([]Domain, 0, len(data.sparse))
		for dom := range data.sparse {
			doms = append(doms, dom)
		}
		slices.Sort(doms)
		for _, dom := range doms {
			fn(dom, data.sparse[dom])
		}
		return
	}
	for id, ok := range data.counted {
		if ok {
			fn(Domain(id), data.counts[id])
		}
	}
}

// Clone returns a copy that shares the counts until either side adds.
// Copies may be made concurrently (the framework clones a cycle's state
// from parallel Filter calls).
func (d *DomainCounts) Clone() *DomainCounts {
	if d == nil {
		return nil
	}
	c := &DomainCounts{snap: d.snap, keys: make([]domainKey, len(d.keys))}
	for i := range d.keys {
		if data := d.keys[i].data; data != nil {
			data.refs.Add(1)
		}
		c.keys[i] = d.keys[i]
	}
	return c
}

// domainOf returns the domain of a value, giving a value no node of the
// list has an id of its own.
func (d *DomainCounts) domainOf(k int, value string) Domain {
	if dom := d.ValueDomain(k, value); dom != NoDomain {
		return dom
	}
	data := d.own(k)
	dom := Domain(len(data.counts))
	if data.sparse != nil {
		dom = Domain(data.size)
		data.size++
	} else {
		data.counts, data.counted = append(data.counts, 0), append(data.counted, false)
	}
	if data.extra == nil {
		data.extra = map[string]Domain{}
	}
	data.extra[value] = dom
	data.values = append(data.values, value)
	return dom
}

// own returns key k's data, made this copy's own before a write.
func (d *DomainCounts) own(k int) *domainData {
	key := &d.keys[k]
	old := key.data
	switch {
	case old == nil:
		n := key.col.NumValues()
		if n >= sparseMinValues {
			key.data = &domainData{sparse: map[Domain]int64{}, size: n}
		} else {
			key.data = &domainData{counts: make([]int64, n), counted: make([]bool, n)}
		}
		key.data.refs.Store(1)
	case old.refs.Load() > 1:
		data := &domainData{
			counts:     append([]int64(nil), old.counts...),
			counted:    append([]bool(nil), old.counted...),
			numCounted: old.numCounted,
			nonZero:    old.nonZero,
			values:     append([]string(nil), old.values...),
			size:       old.size,
			present:    append([]uint64(nil), old.present...),
		}
		if old.sparse != nil {
			data.counts, data.counted = nil, nil
			data.sparse = make(map[Domain]int64, len(old.sparse))
			for dom, c := range old.sparse {
				data.sparse[dom] = c
			}
		}
		if old.extra != nil {
			data.extra = make(map[string]Domain, len(old.extra))
			for v, dom := range old.extra {
				data.extra[v] = dom
			}
		}
		data.refs.Store(1)
		old.refs.Add(-1)
		key.data = data
	}
	return key.data
}

// sparseMinValues is the fewest values a key has for its counts to start
// sparse, and sparseShare the share of them (1/sparseShare) past which
// sparse counts turn dense.
var sparseMinValues, sparseShare = 512, 16

// densify turns sparse counts dense.
func (data *domainData) densify() {
	size := data.size
	for dom := range data.sparse {
		size = max(size, int(dom)+1)
	}
	data.counts, data.counted = make([]int64, size), make([]bool, size)
	for dom, c := range data.sparse {
		data.counts[dom], data.counted[dom] = c, true
	}
	data.sparse, data.size, data.present = nil, 0, nil
}
