package interpodaffinity

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// PreScore sums, per topology pair, two things (kube's processExistingPod):
//
//  (a) the incoming pod's preferred terms matched against every existing
//      pod: a term's per-node count of matching pods, from the pods
//      carrying the term's label pair (schedcore.TermCounter);
//  (b) every existing pod's terms (required affinity at
//      hardPodAffinityWeight, preferred affinity and anti-affinity) matched
//      against the incoming pod: existing terms are grouped by their content
//      in termIndex, each group counting its pods per topology value, kept
//      up to date node by node as nodes change. A cycle matches the
//      incoming pod once per distinct term instead of once per pod.
//
// Both give exactly kube's sums (integer addition, per-term int32 products)
// and the same set of pairs (a pair exists when some term matched on a node
// with the topology label).

// termGroup is the existing terms of one content: the pods carrying it
// counted per value of its topology key.
type termGroup struct {
	key    string
	term   schedcore.AffinityTerm
	weight int64 // int64(int32(weight) * multiplier), as kube computes it
	counts map[string]int
	refs   int
	// pair is a label pair every pod the term matches carries (see
	// requiredPair), "" when there is none.
	pair string
	// shared is counts by domain (one key, the term's), made from counts
	// when a cycle first needs them and kept up to date with them:
	// PreFilter's existing counts share it or add it (anti), PreScore adds
	// it (addTo). A domain whose count went back to 0 stays
	// counted there: PreFilter only reads the counts (NonZero, At), addTo
	// skips zeros.
	shared *schedcore.DomainCounts
}

// addTo adds the group's counts times its weight to key k of into (over snap),
// by domain from the group's own counts by domain (shared, made from
// counts when there are none over snap's label column): a cycle then
// looks up no value, and a hostname term's thousands of values cost an
// array pass. With share (key k new, weight 1), key k is made the group's
// counts by domain instead, shared copy-on-write (apply adds to them as to
// counts). The counts by domain are made again when the snapshot's nodes
// changed since (the label column they were made over is no longer the
// snapshot's: ShareKey and AddKeyScaled refuse them).
func (g *termGroup) addTo(snap *schedcore.Snapshot, into *schedcore.DomainCounts, k int, share bool) {
	put := func() bool {
		if share {
			return into.ShareKey(k, g.shared, 0)
		}
		return into.AddKeyScaled(k, g.shared, 0, g.weight)
	}
	if g.shared != nil && put() {
		return
	}
	g.shared = schedcore.NewDomainCounts(snap, g.term.TopologyKey)
	for v, c := range g.counts {
		g.shared.AddValue(0, v, int64(c))
	}
	if !put() {
		// Not over snap: by value.
		for v, c := range g.counts {
			into.AddValue(k, v, int64(c)*g.weight)
		}
	}
}

type termEntry struct {
	g     *termGroup
	value string
	n     int
}

// termIndex holds the groups of all nodes' existing terms: their scoring
// terms (newTermIndex), or their required anti-affinity terms, each of
// weight 1 (newAntiIndex, for PreFilter: a term matching the incoming pod
// counts once per pod carrying it, per topology value).
type termIndex struct {
	mu     sync.Mutex
	nodes  schedcore.NodeSlots[termSlot]
	groups map[string]*termGroup
	hard   int32
	anti   bool
	// byPair holds the groups by their pair; loose those without one.
	// Together they are groups: matching lists only the groups a pod may
	// match.
	byPair map[string]map[*termGroup]struct{}
	loose  map[*termGroup]struct{}
	// mixed counts the nodes holding both a hostname-scoped required
	// anti-affinity term and a pod with another one (anti only): with the
	// hostname fast path, PreFilter must then evaluate host-scoped terms.
	mixed int
}

// termSlot is what one node put in the index.
type termSlot struct {
	es    []termEntry
	mixed bool
}

func newTermIndex(hardPodAffinityWeight int32) *termIndex {
	return &termIndex{groups: map[string]*termGroup{}, hard: hardPodAffinityWeight}
}

func newAntiIndex() *termIndex {
	return &termIndex{groups: map[string]*termGroup{}, anti: true}
}

func (x *termIndex) add(es []termEntry, t *schedcore.AffinityTerm, weight int64, value string) []termEntry {
	key := new(schedcore.MemoKey).Int(weight).AffinityTerm(t).Key()
	g := x.groups[key]
	if g == nil {
		g = &termGroup{key: key, term: *t, weight: weight, counts: map[string]int{}, pair: requiredPair(t.Selector)}
		x.groups[key] = g
		x.file(g, true)
	}
	for i := range es {
		if es[i].g == g && es[i].value == value {
			es[i].n++
			return es
		}
	}
	return append(es, termEntry{g: g, value: value, n: 1})
}

// antiEntries lists ni's pods' required anti-affinity terms, grouped, and
// whether the node is mixed (see termIndex.mixed).
func (x *termIndex) antiEntries(ni *schedcore.NodeInfo) (es []termEntry, mixed bool) {
	node := ni.Node()
	if node == nil {
		return nil, false
	}
	var host, other bool
	for _, p := range ni.PodsWithRequiredAntiAffinity {
		other = other || nonHostScoped(p)
		for i := range p.RequiredAntiAffinityTerms {
			t := &p.RequiredAntiAffinityTerms[i]
			host = host || t.TopologyKey == v1.LabelHostname
			if v, ok := node.Labels[t.TopologyKey]; ok {
				es = x.add(es, t, 1, v)
			}
		}
	}
	return es, host && other
}

// nodeEntries lists what ni's pods' terms add, grouped.
func (x *termIndex) nodeEntries(ni *schedcore.NodeInfo) []termEntry {
	node := ni.Node()
	if node == nil || len(node.Labels) == 0 {
		return nil
	}
	var es []termEntry
	for _, p := range ni.PodsWithAffinity {
		if x.hard > 0 {
			for i := range p.RequiredAffinityTerms {
				t := &p.RequiredAffinityTerms[i]
				if v, ok := node.Labels[t.TopologyKey]; ok {
					es = x.add(es, t, int64(x.hard), v)
				}
			}
		}
		for i := range p.PreferredAffinityTerms {
			t := &p.PreferredAffinityTerms[i]
			if v, ok := node.Labels[t.TopologyKey]; ok {
				es = x.add(es, &t.AffinityTerm, int64(t.Weight), v)
			}
		}
		for i := range p.PreferredAntiAffinityTerms {
			t := &p.PreferredAntiAffinityTerms[i]
			if v, ok := node.Labels[t.TopologyKey]; ok {
				es = x.add(es, &t.AffinityTerm, int64(t.Weight*-1), v)
			}
		}
	}
	return es
}

func (x *termIndex) apply(es []termEntry, sign int) {
	for _, e := range es {
		x.applyOne(e, sign)
	}
}

// applyOne adds (sign 1) or removes (-1) one entry.
func (x *termIndex) applyOne(e termEntry, sign int) {
	g := e.g
	if g.shared != nil {
		// Copied first if a cycle shares it.
		g.shared.AddValue(0, e.value, int64(sign*e.n))
	}
	c := g.counts[e.value] + sign*e.n
	if c == 0 {
		delete(g.counts, e.value)
	} else {
		g.counts[e.value] = c
	}
	g.refs += sign * e.n
	if g.refs == 0 {
		delete(x.groups, g.key)
		x.file(g, false)
	}
}

// sync brings the groups up to date with the snapshot's nodes (those
// replaced since the last sync). Call with x.mu held.
func (x *termIndex) sync(snap *schedcore.Snapshot) {
	keep := keepsScoreEntries
	if x.anti {
		keep = keepsAntiEntries
	}
	x.nodes.SyncSnapshotKeep(snap, keep, func(s *termSlot) { x.drop(s) }, func(ni *schedcore.NodeInfo, s *termSlot) {
		var fresh []termEntry
		mixed := false
		if x.anti {
			fresh, mixed = x.antiEntries(ni)
		} else {
			fresh = x.nodeEntries(ni)
		}
		x.applyDiff(fresh, s.es)
		if s.mixed {
			x.mixed--
		}
		if mixed {
			x.mixed++
		}
		s.es, s.mixed = fresh, mixed
	})
}

// keepsScoreEntries reports whether a node's entries (nodeEntries) stay
// the same when it gains pod p, its node object and other pods the same:
// p carries none of the terms they are read from (a pod with required
// anti-affinity alone adds none). Most placed pods carry none: their node
// is not read again.
func keepsScoreEntries(p *schedcore.PodInfo) bool {
	return len(p.RequiredAffinityTerms) == 0 && len(p.PreferredAffinityTerms) == 0 && len(p.PreferredAntiAffinityTerms) == 0
}

// keepsAntiEntries is keepsScoreEntries for antiEntries.
func keepsAntiEntries(p *schedcore.PodInfo) bool { return !schedcore.HasRequiredAntiAffinity(p.Pod) }

// applyDiff replaces a node's old entries by its fresh ones, applying only
// what differs: a node changes by a pod or two, and its other pods' terms
// would be removed and added back. Increases go first, so that groups the
// old and fresh entries share are not dropped and re-created.
func (x *termIndex) applyDiff(fresh, old []termEntry) {
	var diff []termEntry
	var buf [16]bool
	matched := buf[:0]
	if len(old) <= len(buf) {
		matched = buf[:len(old)]
	} else {
		matched = make([]bool, len(old))
	}
	for _, e := range fresh {
		for j := range old {
			if !matched[j] && old[j].g == e.g && old[j].value == e.value {
				matched[j] = true
				e.n -= old[j].n
				break
			}
		}
		if e.n != 0 {
			diff = append(diff, e)
		}
	}
	for j, e := range old {
		if !matched[j] {
			e.n = -e.n
			diff = append(diff, e)
		}
	}
	for _, e := range diff {
		if e.n > 0 {
			x.applyOne(e, 1)
		}
	}
	for _, e := range diff {
		if e.n < 0 {
			e.n = -e.n
			x.applyOne(e, -1)
		}
	}
}

// drop takes a node's slot out of the index.
func (x *termIndex) drop(s *termSlot) {
	x.apply(s.es, -1)
	if s.mixed {
		x.mixed--
	}
	s.es, s.mixed = nil, false
}

// topologyKeys returns the distinct topology keys of the groups, brought
// up to date with snap first.
func (x *termIndex) topologyKeys(snap *schedcore.Snapshot) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.sync(snap)
	var keys []string
	for _, g := range x.groups {
		if !slices.Contains(keys, g.term.TopologyKey) {
			keys = append(keys, g.term.TopologyKey)
		}
	}
	return keys
}

// file adds g to (or removes it from) byPair or loose.
func (x *termIndex) file(g *termGroup, add bool) {
	if x.byPair == nil {
		x.byPair, x.loose = map[string]map[*termGroup]struct{}{}, map[*termGroup]struct{}{}
	}
	set := x.loose
	if g.pair != "" {
		set = x.byPair[g.pair]
		if set == nil {
			if !add {
				return
			}
			set = map[*termGroup]struct{}{}
			x.byPair[g.pair] = set
		}
	}
	if add {
		set[g] = struct{}{}
		return
	}
	delete(set, g)
	if g.pair != "" && len(set) == 0 {
		delete(x.byPair, g.pair)
	}
}

// matching calls fn for each group whose term may match pod: those whose
// pair the pod's labels hold, and those without a pair; never a group
// whose term requires a label pair the pod lacks. Call with x.mu held.
func (x *termIndex) matching(pod *v1.Pod, fn func(g *termGroup)) {
	for g := range x.loose {
		fn(g)
	}
	if len(x.byPair) == 0 {
		return
	}
	for k, v := range pod.Labels {
		for g := range x.byPair[labelPair(k, v)] {
			fn(g)
		}
	}
}

// requiredPair returns a label pair (labelPair) that every label set sel
// matches holds: from a requirement that the key equal one value; "" if
// sel has none.
func requiredPair(sel labels.Selector) string {
	if sel == nil {
		return ""
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return ""
	}
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			if vals := r.Values(); vals.Len() == 1 {
				return labelPair(r.Key(), vals.UnsortedList()[0])
			}
		}
	}
	return ""
}

// labelPair is a label key and value as one string.
func labelPair(k, v string) string { return k + "\x00" + v }
