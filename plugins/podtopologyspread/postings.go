package podtopologyspread

import (
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// postings indexes the snapshot's pods by (namespace, label key, value), so
// that counting the pods a selector with an equality requirement matches
// visits only the pods carrying that label pair, not every pod of every
// node. It is brought up to date node by node: a node whose generation is
// unchanged keeps its entries.
type postings struct {
	mu    sync.Mutex
	nodes schedcore.NodeSlots[[]string]
	byKey map[string]map[int32][]*schedcore.PodInfo
}

func newPostings() *postings {
	return &postings{byKey: map[string]map[int32][]*schedcore.PodInfo{}}
}

func postingKey(ns, k, v string) string { return ns + "\x00" + k + "\x00" + v }

// sync brings the index up to date with nodes; call with mu held.
func (x *postings) sync(nodes []*schedcore.NodeInfo) {
	x.nodes.Sync(nodes, func(i int, keys *[]string) { x.drop(int32(i), *keys) }, func(i int, ni *schedcore.NodeInfo, keys *[]string) {
		x.drop(int32(i), *keys)
		*keys = (*keys)[:0]
		for _, pi := range ni.Pods {
			p := pi.Pod
			if p.DeletionTimestamp != nil {
				continue
			}
			for k, v := range p.Labels {
				key := postingKey(p.Namespace, k, v)
				m := x.byKey[key]
				if m == nil {
					m = map[int32][]*schedcore.PodInfo{}
					x.byKey[key] = m
				}
				if len(m[int32(i)]) == 0 {
					*keys = append(*keys, key)
				}
				m[int32(i)] = append(m[int32(i)], pi)
			}
		}
	})
}

func (x *postings) drop(i int32, keys []string) {
	for _, key := range keys {
		m := x.byKey[key]
		delete(m, i)
		if len(m) == 0 {
			delete(x.byKey, key)
		}
	}
}

// candidates returns, by node list index, the pods that may match sel in
// namespace ns: those carrying the rarest of sel's single-valued equality
// requirements. ok is false when sel has no such requirement.
func (x *postings) candidates(sel labels.Selector, ns string) (map[int32][]*schedcore.PodInfo, bool) {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return nil, false
	}
	var best map[int32][]*schedcore.PodInfo
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
		m := x.byKey[postingKey(ns, r.Key(), vals.UnsortedList()[0])]
		if !found || len(m) < len(best) {
			best, found = m, true
		}
	}
	return best, found
}
