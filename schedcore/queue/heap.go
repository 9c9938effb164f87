package queue

import (
	"container/heap"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// podKey is the key pods have in every sub-queue: namespace/name, as kube's
// queuedEntityKeyFunc (without the entity type, since only pods are queued).
func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// podHeap is a heap of queued pods keyed by podKey, like kube's
// backend/heap: AddOrUpdate replaces an item in place and re-fixes it.
// It is not safe for concurrent use; its owner holds a lock.
type podHeap struct {
	items []*schedcore.QueuedPodInfo
	index map[string]int
	less  func(a, b *schedcore.QueuedPodInfo) bool
	// onLen, if set, is told of every change in length (metrics).
	onLen func(delta int)
}

func newPodHeap(less func(a, b *schedcore.QueuedPodInfo) bool, onLen func(int)) *podHeap {
	return &podHeap{index: map[string]int{}, less: less, onLen: onLen}
}

// heap.Interface, on the unexported adapter so the public methods stay ours.
type podHeapData podHeap

func (d *podHeapData) Len() int           { return len(d.items) }
func (d *podHeapData) Less(i, j int) bool { return d.less(d.items[i], d.items[j]) }
func (d *podHeapData) Swap(i, j int) {
	d.items[i], d.items[j] = d.items[j], d.items[i]
	d.index[podKey(d.items[i].Pod)] = i
	d.index[podKey(d.items[j].Pod)] = j
}
func (d *podHeapData) Push(x any) {
	q := x.(*schedcore.QueuedPodInfo)
	d.index[podKey(q.Pod)] = len(d.items)
	d.items = append(d.items, q)
}
func (d *podHeapData) Pop() any {
	n := len(d.items) - 1
	q := d.items[n]
	d.items[n] = nil
	d.items = d.items[:n]
	delete(d.index, podKey(q.Pod))
	return q
}

func (h *podHeap) data() *podHeapData { return (*podHeapData)(h) }

// AddOrUpdate inserts q, or replaces the item with the same key.
func (h *podHeap) AddOrUpdate(q *schedcore.QueuedPodInfo) {
	k := podKey(q.Pod)
	if i, ok := h.index[k]; ok {
		h.items[i] = q
		heap.Fix(h.data(), i)
		return
	}
	heap.Push(h.data(), q)
	h.changed(1)
}

// Delete removes the item with the pod's key and returns it, or nil.
func (h *podHeap) Delete(p *v1.Pod) *schedcore.QueuedPodInfo {
	i, ok := h.index[podKey(p)]
	if !ok {
		return nil
	}
	q := heap.Remove(h.data(), i).(*schedcore.QueuedPodInfo)
	h.changed(-1)
	return q
}

// Get returns the item with the pod's key.
func (h *podHeap) Get(p *v1.Pod) (*schedcore.QueuedPodInfo, bool) {
	i, ok := h.index[podKey(p)]
	if !ok {
		return nil, false
	}
	return h.items[i], true
}

// Has reports whether an item with the pod's key is queued.
func (h *podHeap) Has(p *v1.Pod) bool { _, ok := h.index[podKey(p)]; return ok }

// Peek returns the head without removing it.
func (h *podHeap) Peek() (*schedcore.QueuedPodInfo, bool) {
	if len(h.items) == 0 {
		return nil, false
	}
	return h.items[0], true
}

// Pop removes and returns the head.
func (h *podHeap) Pop() (*schedcore.QueuedPodInfo, bool) {
	if len(h.items) == 0 {
		return nil, false
	}
	q := heap.Pop(h.data()).(*schedcore.QueuedPodInfo)
	h.changed(-1)
	return q, true
}

// Len returns the number of items.
func (h *podHeap) Len() int { return len(h.items) }

// List returns the items in heap (not sorted) order.
func (h *podHeap) List() []*schedcore.QueuedPodInfo {
	return append([]*schedcore.QueuedPodInfo(nil), h.items...)
}

func (h *podHeap) changed(delta int) {
	if h.onLen != nil {
		h.onLen(delta)
	}
}
