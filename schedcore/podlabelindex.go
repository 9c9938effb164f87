package schedcore

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// PodLabelIndex indexes a snapshot's pods by (namespace, label key,
// value), so that counting the pods a selector with an equality
// requirement matches visits only the pods carrying that label pair, not
// every pod of every node. It is kept across cycles and brought up to
// date node by node: a node whose generation is unchanged keeps its
// entries. Only the label keys that selectors have asked for are indexed
// (keys): pods carry label keys no selector reads (pod-template-hash and
// the like), and indexing them was half of what the first explanation
// after loading paid for the index. Terminating pods are indexed too:
// PodTopologySpread's counts skip them, InterPodAffinity's count them, as
// kube's do. Safe for concurrent use.
type PodLabelIndex struct {
	mu    sync.Mutex
	nodes NodeSlots[postingSlot]
	byKey map[string]*posting
	// keys are the label keys indexed, in the order they were first asked
	// for; wanted holds them too, to look them up.
	keys   []string
	wanted map[string]bool
	// key, pairs and touched are buffers.
	key     []byte
	pairs   []postingPair
	touched []*posting
}

// posting is the pods carrying one label pair: pods[j] is on the node at
// list position pos[j], in position order, a node's pods one run. Twelve
// bytes a pod: a snapshot's postings hold each pod once per label.
type posting struct {
	key  string
	pos  []int32
	pods []*PodInfo
	// mark is 1 + the posting's index in the touched list of the node
	// being indexed (0: not touched).
	mark int
}

// postingPair is one pod of the node being indexed with one of its label
// pairs' postings.
type postingPair struct {
	p  *posting
	pi *PodInfo
}

// postingSlot is what a node put in the index: its label pairs' postings,
// at its position, and the pods it indexed, in order.
type postingSlot struct {
	pos  int32
	keys []*posting
	pods []*PodInfo
}

// NewPodLabelIndex returns an empty index.
func NewPodLabelIndex() *PodLabelIndex {
	return &PodLabelIndex{byKey: map[string]*posting{}}
}

// postingKey appends the key of label pair k=v in namespace ns to b.
func postingKey(b []byte, ns, k, v string) []byte {
	b = append(b, ns...)
	b = append(b, 0)
	b = append(b, k...)
	b = append(b, 0)
	return append(b, v...)
}

// lookup returns the posting of label pair k=v in ns (nil if no pod
// carries it); call with mu held.
func (x *PodLabelIndex) lookup(ns, k, v string) *posting {
	x.key = postingKey(x.key[:0], ns, k, v)
	return x.byKey[string(x.key)]
}

// Candidates calls fn for each node of snap holding pods of namespace ns
// that may match sel, with those pods: the ones carrying the rarest of
// sel's single-valued equality requirements (terminating pods included).
// It reports false, calling nothing, when sel has no such requirement.
// fn must not keep or change pods.
func (x *PodLabelIndex) Candidates(snap *Snapshot, sel labels.Selector, ns string, fn func(ni *NodeInfo, pods []*PodInfo)) bool {
	return x.candidates(snap, sel, ns, func(int) func(ni *NodeInfo, pods []*PodInfo) { return fn })
}

// candidates is Candidates with the visit chosen by start, which is told
// how many candidate pods there are before any node is visited.
func (x *PodLabelIndex) candidates(snap *Snapshot, sel labels.Selector, ns string, start func(pods int) func(ni *NodeInfo, pods []*PodInfo)) bool {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byKey == nil {
		x.byKey = map[string]*posting{}
	}
	nodes := snap.List()
	x.sync(snap)
	var best *posting
	found := false
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
		default:
			continue
		}
		vals := r.Values()
		if vals.Len() != 1 {
			continue
		}
		x.want(r.Key())
		p := x.lookup(ns, r.Key(), vals.UnsortedList()[0])
		if !found || p.size() < best.size() {
			best, found = p, true
		}
	}
	if !found {
		return false
	}
	fn := start(best.size())
	if best == nil {
		return true
	}
	pos, pods := best.pos, best.pods
	for a := 0; a < len(pos); {
		i, b := pos[a], a+1
		for b < len(pos) && pos[b] == i {
			b++
		}
		if int(i) < len(nodes) {
			fn(nodes[i], pods[a:b:b])
		}
		a = b
	}
	return true
}

// want makes label key k one the index holds, indexing it on every node
// synced so far (the nodes synced later index it as they are refreshed);
// call with mu held, after sync. Each slot's pods are its node's, in
// order, and the slots are visited by position, so each new posting's
// runs are appended in position order, pods in pod order: as refresh
// would have put them.
func (x *PodLabelIndex) want(k string) {
	if x.wanted[k] {
		return
	}
	if x.wanted == nil {
		x.wanted = map[string]bool{}
	}
	x.wanted[k] = true
	x.keys = append(x.keys, k)
	touched := x.touched[:0]
	for i := range x.nodes.vals {
		s := &x.nodes.vals[i]
		for _, pi := range s.pods {
			v, ok := pi.Pod.Labels[k]
			if !ok {
				continue
			}
			p := x.lookup(pi.Pod.Namespace, k, v)
			if p == nil {
				p = &posting{key: string(x.key)}
				x.byKey[p.key] = p
			}
			if !slices.Contains(touched, p) {
				touched = append(touched, p)
			}
			p.pos, p.pods = append(p.pos, s.pos), append(p.pods, pi)
		}
		s.keys = append(s.keys, touched...)
		clear(touched)
		touched = touched[:0]
	}
	x.touched = touched
}

// size is how many pods carry the posting's label pair (0 for nil).
func (p *posting) size() int {
	if p == nil {
		return 0
	}
	return len(p.pos)
}

// sync brings the index up to date with snap's nodes (those replaced since
// the last sync); call with mu held.
func (x *PodLabelIndex) sync(snap *Snapshot) {
	x.nodes.SyncSnapshot(snap, func(s *postingSlot) { x.drop(s) }, x.refresh)
}

// drop takes the node of slot s out of its postings.
func (x *PodLabelIndex) drop(s *postingSlot) {
	for k, p := range s.keys {
		x.setRun(p, s.pos, nil)
		s.keys[k] = nil
	}
	s.keys = s.keys[:0]
	clear(s.pods)
	s.pods = s.pods[:0]
}

// refresh indexes node ni in place of what slot s (its position's) held.
func (x *PodLabelIndex) refresh(ni *NodeInfo, s *postingSlot) {
	i := int32(ni.listIndex())
	if s.pos == i && x.appended(ni, s) {
		return
	}
	defer func() {
		clear(s.pods)
		s.pods = append(s.pods[:0], ni.Pods...)
	}()
	// The node's pods by label pair: each posting's pods gathered in
	// pod order, then each posting's run for the node replaced once.
	pairs, touched := x.pairs[:0], x.touched[:0]
	for _, pi := range ni.Pods {
		pod := pi.Pod
		for _, k := range x.keys {
			v, ok := pod.Labels[k]
			if !ok {
				continue
			}
			p := x.lookup(pod.Namespace, k, v)
			if p == nil {
				p = &posting{key: string(x.key)}
				x.byKey[p.key] = p
			}
			if p.mark == 0 {
				touched = append(touched, p)
				p.mark = len(touched)
			}
			pairs = append(pairs, postingPair{p, pi})
		}
	}
	if len(s.keys) == 0 && x.appendRuns(i, pairs, touched) {
		// A slot that held no postings, at a position after every
		// posting's last run (the index's first build, in list order):
		// each posting's run for the node is its pods in pod order,
		// appended; no sorting, no runs moved.
		keys := append(s.keys[:0], touched...)
		for _, p := range touched {
			p.mark = 0
		}
		s.pos, s.keys = i, keys
		clear(pairs)
		clear(touched)
		x.pairs, x.touched = pairs[:0], touched[:0]
		return
	}
	// The old position's postings the node no longer has.
	for k, p := range s.keys {
		if p.mark == 0 || s.pos != i {
			x.setRun(p, s.pos, nil)
		}
		s.keys[k] = nil
	}
	// Counting sort of the pairs by posting, stable: pods in pod order.
	ends := make([]int, len(touched)+1)
	for _, pr := range pairs {
		ends[pr.p.mark]++
	}
	for k := 1; k < len(ends); k++ {
		ends[k] += ends[k-1]
	}
	sorted := make([]*PodInfo, len(pairs))
	at := slices.Clone(ends[:len(touched)])
	for _, pr := range pairs {
		m := pr.p.mark - 1
		sorted[at[m]] = pr.pi
		at[m]++
	}
	keys := s.keys[:0]
	for k, p := range touched {
		x.setRun(p, i, sorted[ends[k]:ends[k+1]])
		p.mark = 0
		keys = append(keys, p)
	}
	s.pos, s.keys = i, keys
	clear(pairs)
	clear(touched)
	x.pairs, x.touched = pairs[:0], touched[:0]
}

// appendRuns appends the pairs' pods, in pair (pod) order, to their
// postings at position i, when every touched posting's runs are all
// before i (so the pods go at the end, where setRun would put them); false,
// changing nothing, when a posting has a run at i or after it.
func (x *PodLabelIndex) appendRuns(i int32, pairs []postingPair, touched []*posting) bool {
	for _, p := range touched {
		if n := len(p.pos); n > 0 && p.pos[n-1] >= i {
			return false
		}
	}
	for _, pr := range pairs {
		pr.p.pos, pr.p.pods = append(pr.p.pos, i), append(pr.p.pods, pr.pi)
	}
	return true
}

// appended brings slot s, at ni's position, up to ni's pods by the pods
// that differ: ni holds the slot's first pods, in the same order (a
// placement appends its pod; a confirmed pod replaces the last), so the
// slot's pods after those (at most maxUnindexed) are taken out and ni's
// after them indexed at the end of their postings' runs for the position,
// where a full refresh would put them; the pods both hold are not read
// again. PodInfos are never changed in place and the slot keeps the ones
// it indexed alive, so an equal pointer is the same pod with the same
// labels. False, changing nothing, when more pods differ.
func (x *PodLabelIndex) appended(ni *NodeInfo, s *postingSlot) bool {
	if len(s.pods) == 0 && len(s.keys) > 0 {
		return false
	}
	// The pods both hold first; a confirmed or updated pod replaces the
	// node's last one (the cache removes a pod by moving the last into
	// its place): a tail of a pod or two is taken out pod by pod.
	same := 0
	for same < len(s.pods) && same < len(ni.Pods) && ni.Pods[same] == s.pods[same] {
		same++
	}
	if len(s.pods)-same > maxUnindexed {
		return false
	}
	for _, pi := range s.pods[same:] {
		x.unindex(s, pi)
	}
	clear(s.pods[same:])
	s.pods = s.pods[:same]
	for _, pi := range ni.Pods[same:] {
		pod := pi.Pod
		for _, k := range x.keys {
			v, ok := pod.Labels[k]
			if !ok {
				continue
			}
			p := x.lookup(pod.Namespace, k, v)
			if p == nil {
				p = &posting{key: string(x.key)}
				x.byKey[p.key] = p
			}
			if !slices.Contains(s.keys, p) {
				s.keys = append(s.keys, p)
			}
			// After the run of position s.pos: the first entry of a
			// later position.
			at, _ := slices.BinarySearch(p.pos, s.pos+1)
			p.pos, p.pods = slices.Insert(p.pos, at, s.pos), slices.Insert(p.pods, at, pi)
		}
		s.pods = append(s.pods, pi)
	}
	return true
}

// maxUnindexed is the most pods appended takes out one by one; more
// make a full refresh.
const maxUnindexed = 2

// unindex takes pod pi, indexed in slot s, out of its label pairs'
// postings; a posting left without the slot's pods leaves s.keys, and
// the index when it is left empty.
func (x *PodLabelIndex) unindex(s *postingSlot, pi *PodInfo) {
	pod := pi.Pod
	for _, k := range x.keys {
		v, ok := pod.Labels[k]
		if !ok {
			continue
		}
		p := x.lookup(pod.Namespace, k, v)
		if p == nil {
			continue
		}
		a, _ := slices.BinarySearch(p.pos, s.pos)
		b := a
		for b < len(p.pos) && p.pos[b] == s.pos {
			b++
		}
		j := slices.Index(p.pods[a:b], pi)
		if j < 0 {
			continue
		}
		p.pos, p.pods = slices.Delete(p.pos, a+j, a+j+1), slices.Delete(p.pods, a+j, a+j+1)
		if b-a > 1 {
			continue
		}
		if at := slices.Index(s.keys, p); at >= 0 {
			s.keys = slices.Delete(s.keys, at, at+1)
		}
		if len(p.pos) == 0 {
			delete(x.byKey, p.key)
			p.pos, p.pods = nil, nil
		}
	}
}

// setRun makes pods the run of position i in p (none when pods is
// empty); a posting left empty leaves the index.
func (x *PodLabelIndex) setRun(p *posting, i int32, pods []*PodInfo) {
	a, _ := slices.BinarySearch(p.pos, i)
	b := a
	for b < len(p.pos) && p.pos[b] == i {
		b++
	}
	n, grow := len(p.pos), len(pods)-(b-a)
	switch {
	case grow > 0:
		p.pos, p.pods = slices.Grow(p.pos, grow)[:n+grow], slices.Grow(p.pods, grow)[:n+grow]
		copy(p.pos[b+grow:], p.pos[b:n])
		copy(p.pods[b+grow:], p.pods[b:n])
	case grow < 0:
		copy(p.pos[b+grow:], p.pos[b:])
		copy(p.pods[b+grow:], p.pods[b:])
		clear(p.pods[n+grow:])
		p.pos, p.pods = p.pos[:n+grow], p.pods[:n+grow]
	}
	for k := range pods {
		p.pos[a+k], p.pods[a+k] = i, pods[k]
	}
	switch n += grow; {
	case n == 0:
		if x.byKey[p.key] == p {
			delete(x.byKey, p.key)
		}
		p.pos, p.pods = nil, nil
	case cap(p.pos) > 64 && cap(p.pos) > 4*n:
		// Much shrunk: give the room back.
		p.pos, p.pods = slices.Clip(slices.Clone(p.pos)), slices.Clip(slices.Clone(p.pods))
	}
}

// denseCandidates reports whether candidate pods that many, on a
// snapshot of numNodes nodes, are worth remembering a count per node for
// across cycles (a NodeMemo table, one entry per node of the snapshot):
// when they are many. Fewer are counted each time: they are the pods
// carrying the label pair, and a table of every node's count would be
// mostly empty.
func denseCandidates(pods, numNodes int) bool { return pods*denseCandidateShare >= numNodes }

// denseCandidateShare: at least one candidate pod per denseCandidateShare
// nodes is remembered.
const denseCandidateShare = 8
