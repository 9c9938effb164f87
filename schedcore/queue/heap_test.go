package queue

import (
	"container/heap"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// refHeap is the heap as kube's backend/heap builds it, on container/heap.
type refHeap struct {
	items []*schedcore.QueuedPodInfo
	index map[string]int
	less  func(a, b *schedcore.QueuedPodInfo) bool
}

func (r *refHeap) Len() int           { return len(r.items) }
func (r *refHeap) Less(i, j int) bool { return r.less(r.items[i], r.items[j]) }
func (r *refHeap) Swap(i, j int) {
	r.items[i], r.items[j] = r.items[j], r.items[i]
	r.index[podKey(r.items[i].Pod)] = i
	r.index[podKey(r.items[j].Pod)] = j
}
func (r *refHeap) Push(x any) {
	q := x.(*schedcore.QueuedPodInfo)
	r.index[podKey(q.Pod)] = len(r.items)
	r.items = append(r.items, q)
}
func (r *refHeap) Pop() any {
	n := len(r.items) - 1
	q := r.items[n]
	r.items = r.items[:n]
	delete(r.index, podKey(q.Pod))
	return q
}

// TestPodHeapIsContainerHeap: the written-out heap moves items exactly as
// container/heap does, so pods the less function ties (same priority, same
// timestamp) come out in the same order.
func TestPodHeapIsContainerHeap(t *testing.T) {
	// Ties everywhere: three priorities, no timestamps.
	tied := func(a, b *schedcore.QueuedPodInfo) bool { return a.Priority() > b.Priority() }
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		h := newPodHeap(tied, nil)
		ref := &refHeap{index: map[string]int{}, less: tied}
		var got, want []string
		for range 500 {
			name := fmt.Sprint("p", rng.Intn(40))
			q := &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(pod(name).Priority(int32(rng.Intn(3))).Obj())}
			switch rng.Intn(4) {
			case 0, 1:
				h.AddOrUpdate(q)
				if i, ok := ref.index[podKey(q.Pod)]; ok {
					ref.items[i] = q
					heap.Fix(ref, i)
				} else {
					heap.Push(ref, q)
				}
			case 2:
				if d := h.Delete(q.Pod); d != nil {
					got = append(got, "delete "+d.Pod.Name)
				}
				if i, ok := ref.index[podKey(q.Pod)]; ok {
					want = append(want, "delete "+heap.Remove(ref, i).(*schedcore.QueuedPodInfo).Pod.Name)
				}
			case 3:
				if p, ok := h.Pop(); ok {
					got = append(got, fmt.Sprint("pop ", p.Pod.Name, " ", p.Priority()))
				}
				if ref.Len() > 0 {
					p := heap.Pop(ref).(*schedcore.QueuedPodInfo)
					want = append(want, fmt.Sprint("pop ", p.Pod.Name, " ", p.Priority()))
				}
			}
		}
		for _, q := range h.List() {
			got = append(got, "left "+q.Pod.Name)
		}
		for _, q := range ref.items {
			want = append(want, "left "+q.Pod.Name)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d (-container/heap +podHeap):\n%s", seed, diff)
		}
	}
}
