package schedcore

import (
	"fmt"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An evicted score memo table gives its entries to the next new table only
// when no view of it can still be read or written: none pinned, none
// handed out by View; the new table starts empty. Each case runs steps on
// a memo of one key (every new key evicts the last) and says which
// table's entries each key's table must (or must not) be made of, and
// that the views handed out before still read their own values.
func TestVerdictMemoRecyclesOnlyUnusedTables(t *testing.T) {
	cache := NewCache(DefaultFeatures)
	for i := range 3 {
		cache.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i)}})
	}
	snap := NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	nodes := snap.List()
	type step struct {
		op  string // pin, view (unpinned), unpin
		key string
		// reuses names the key whose table's entries the new table must
		// be made of ("" for new entries).
		reuses string
		// kept: the key's table is the one of its earlier steps and
		// reads the values put then.
		kept bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"evicted while pinned: not reused", []step{
			{"pin", "a", "", false}, {"pin", "b", "", false}, {"unpin", "b", "", false}, {"unpin", "a", "", false},
		}},
		{"evicted with no view in use: reused, emptied", []step{
			{"pin", "a", "", false}, {"unpin", "a", "", false}, {"pin", "b", "a", false}, {"unpin", "b", "", false},
		}},
		{"unpinned after its eviction: reused then", []step{
			{"pin", "a", "", false}, {"pin", "b", "", false}, {"unpin", "a", "", false}, {"pin", "c", "a", false}, {"unpin", "c", "", false}, {"unpin", "b", "", false},
		}},
		{"handed out by View: never reused", []step{
			{"view", "a", "", false}, {"pin", "b", "", false}, {"unpin", "b", "", false}, {"pin", "c", "b", false}, {"unpin", "c", "", false},
		}},
		{"unpinned while kept: keeps its entries", []step{
			{"pin", "a", "", false}, {"unpin", "a", "", false}, {"pin", "a", "", true}, {"unpin", "a", "", false}, {"pin", "b", "a", false}, {"unpin", "b", "", false},
		}},
		{"pinned twice, unpinned once: not reused", []step{
			{"pin", "a", "", false}, {"pin", "a", "", false}, {"unpin", "a", "", false}, {"pin", "b", "", false}, {"unpin", "a", "", false}, {"unpin", "b", "", false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewVerdictMemo(1)
			views := map[string]VerdictView{}
			pinned := map[string][]*VerdictTable{}
			first := map[string]*atomic.Uint32{}
			for i, s := range tc.steps {
				switch s.op {
				case "unpin":
					ts := pinned[s.key]
					m.Unpin(ts[len(ts)-1])
					pinned[s.key] = ts[:len(ts)-1]
					continue
				case "pin":
					v, tb := m.PinnedView(new(MemoKey).String(s.key), len(nodes))
					views[s.key] = v
					pinned[s.key] = append(pinned[s.key], tb)
				case "view":
					views[s.key] = m.View(new(MemoKey).String(s.key), len(nodes))
				}
				v := views[s.key]
				if _, seen := first[s.key]; !seen {
					first[s.key] = &v.entries[0]
					for _, ni := range nodes {
						if got, ok := v.Get(ni); ok {
							t.Fatalf("step %d: new table of %s holds %d for %s (an evicted key's value)", i, s.key, got, ni.Name())
						}
					}
				}
				if s.kept {
					for j, ni := range nodes {
						if got, ok := v.Get(ni); !ok || got != uint16(len(s.key)*10+j+int(s.key[0])) {
							t.Fatalf("step %d: kept table of %s reads %d, %v for %s", i, s.key, got, ok, ni.Name())
						}
					}
				}
				for other, p := range first {
					if other == s.key {
						continue
					}
					if same := p == first[s.key]; same != (other == s.reuses) {
						t.Fatalf("step %d: table of %s made of %s's entries: %v, want %v", i, s.key, other, same, other == s.reuses)
					}
				}
				for j, ni := range nodes {
					v.Put(ni, uint16(len(s.key)*10+j+int(s.key[0])))
				}
				// Every view still in use reads its own values.
				for k, kv := range views {
					if k == s.key || k == s.reuses {
						continue
					}
					for j, ni := range nodes {
						if got, ok := kv.Get(ni); !ok || got != uint16(len(k)*10+j+int(k[0])) {
							t.Fatalf("step %d: view of %s reads %d, %v for %s after %s %s", i, k, got, ok, ni.Name(), s.op, s.key)
						}
					}
				}
			}
		})
	}
}
