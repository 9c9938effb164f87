package queue

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// podKey is the key a pod has in every sub-queue: namespace/name (kube's
// queuedEntityKeyFunc without the "pod/" prefix, which a pod needs no more
// than before pod groups were queued).
func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// groupKey is a pod group entity's key: "podgroup/NS/NAME", which no pod
// key (without a "/" in a namespace) can equal.
func groupKey(namespace, name string) string { return "podgroup/" + namespace + "/" + name }

// entityKey is the key of a queued entity, a pod or a pod group.
func entityKey(q *schedcore.QueuedPodInfo) string {
	if g := q.Group; g != nil {
		return groupKey(g.Namespace, g.Name)
	}
	return podKey(q.Pod)
}

// podHeap is a heap of queued pods keyed by podKey, like kube's
// backend/heap: AddOrUpdate replaces an item in place and re-fixes it.
// It is not safe for concurrent use; its owner holds a lock.
type podHeap struct {
	items []*heapItem
	index map[string]*heapItem
	less  func(a, b *schedcore.QueuedPodInfo) bool
	// onLen, if set, is told of every change in length (metrics).
	onLen func(delta int)
}

// heapItem is a queued pod with its key, kept so that moving it in the
// heap does not build the key again, and its position in items. The index
// points at the item, so that a move sets its position rather than writing
// the index: a pop from a heap of thousands of pods moves the last item down
// a dozen levels, and two map writes per move (hashing the keys) cost more
// than the comparisons.
type heapItem struct {
	q   *schedcore.QueuedPodInfo
	key string
	pos int
}

func newPodHeap(less func(a, b *schedcore.QueuedPodInfo) bool, onLen func(int)) *podHeap {
	return &podHeap{index: map[string]*heapItem{}, less: less, onLen: onLen}
}

// The heap operations are container/heap's, written out on the items so
// that nothing is boxed into an interface: the same algorithm, hence the
// same order among pods the less function ties.

func (h *podHeap) lessAt(i, j int) bool { return h.less(h.items[i].q, h.items[j].q) }

func (h *podHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].pos, h.items[j].pos = i, j
}

func (h *podHeap) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.lessAt(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *podHeap) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 {
			break
		}
		j := j1
		if j2 := j1 + 1; j2 < n && h.lessAt(j2, j1) {
			j = j2
		}
		if !h.lessAt(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// removeLast drops the last item and returns its pod.
func (h *podHeap) removeLast() *schedcore.QueuedPodInfo {
	n := len(h.items) - 1
	it := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	delete(h.index, it.key)
	return it.q
}

// remove is container/heap's Remove.
func (h *podHeap) remove(i int) *schedcore.QueuedPodInfo {
	n := len(h.items) - 1
	if n != i {
		h.swap(i, n)
		if !h.down(i, n) {
			h.up(i)
		}
	}
	return h.removeLast()
}

// AddOrUpdate inserts q, or replaces the item with the same key.
func (h *podHeap) AddOrUpdate(q *schedcore.QueuedPodInfo) {
	k := entityKey(q)
	if it, ok := h.index[k]; ok {
		it.q = q
		if i := it.pos; !h.down(i, len(h.items)) {
			h.up(i)
		}
		return
	}
	it := &heapItem{q: q, key: k, pos: len(h.items)}
	h.index[k] = it
	h.items = append(h.items, it)
	h.up(len(h.items) - 1)
	h.changed(1)
}

// Delete removes the item with the pod's key and returns it, or nil.
func (h *podHeap) Delete(p *v1.Pod) *schedcore.QueuedPodInfo { return h.DeleteKey(podKey(p)) }

// DeleteKey removes the item with the key and returns it, or nil.
func (h *podHeap) DeleteKey(k string) *schedcore.QueuedPodInfo {
	it, ok := h.index[k]
	if !ok {
		return nil
	}
	q := h.remove(it.pos)
	h.changed(-1)
	return q
}

// Get returns the item with the pod's key.
func (h *podHeap) Get(p *v1.Pod) (*schedcore.QueuedPodInfo, bool) { return h.GetKey(podKey(p)) }

// GetKey returns the item with the key.
func (h *podHeap) GetKey(k string) (*schedcore.QueuedPodInfo, bool) {
	it, ok := h.index[k]
	if !ok {
		return nil, false
	}
	return it.q, true
}

// Has reports whether an item with the pod's key is queued.
func (h *podHeap) Has(p *v1.Pod) bool { _, ok := h.index[podKey(p)]; return ok }

// HasKey reports whether an item with the key is queued.
func (h *podHeap) HasKey(k string) bool { _, ok := h.index[k]; return ok }

// Peek returns the head without removing it.
func (h *podHeap) Peek() (*schedcore.QueuedPodInfo, bool) {
	if len(h.items) == 0 {
		return nil, false
	}
	return h.items[0].q, true
}

// Pop removes and returns the head.
func (h *podHeap) Pop() (*schedcore.QueuedPodInfo, bool) {
	if len(h.items) == 0 {
		return nil, false
	}
	n := len(h.items) - 1
	h.swap(0, n)
	h.down(0, n)
	q := h.removeLast()
	h.changed(-1)
	return q, true
}

// Len returns the number of items.
func (h *podHeap) Len() int { return len(h.items) }

// List returns the items in heap (not sorted) order.
func (h *podHeap) List() []*schedcore.QueuedPodInfo {
	out := make([]*schedcore.QueuedPodInfo, len(h.items))
	for i, it := range h.items {
		out[i] = it.q
	}
	return out
}

func (h *podHeap) changed(delta int) {
	if h.onLen != nil {
		h.onLen(delta)
	}
}
