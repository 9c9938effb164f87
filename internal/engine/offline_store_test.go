package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStoreListsInNameOrder checks that a namespace's pods are listed in
// name order whatever order they were put and deleted in: the names put
// since the last ordered read are merged in when the names are read
// (list, delete). Removing that merge lists them in the order they came.
func TestStoreListsInNameOrder(t *testing.T) {
	pod := func(ns, name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	type op struct {
		del  bool
		name string
		// list: read the namespace after this step and compare.
		list bool
	}
	shuffled := func(n int, seed uint64) []op {
		r := rand.New(rand.NewPCG(seed, 1))
		var ops []op
		for _, i := range r.Perm(n) {
			ops = append(ops, op{name: string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)), list: r.IntN(7) == 0})
		}
		for _, i := range r.Perm(n)[:n/3] {
			ops = append(ops, op{del: true, name: ops[i].name, list: r.IntN(5) == 0})
		}
		return ops
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"in order", []op{{name: "a"}, {name: "b"}, {name: "c", list: true}}},
		{"reversed", []op{{name: "c"}, {name: "b"}, {name: "a", list: true}}},
		{"tail before the head", []op{{name: "m"}, {name: "n", list: true}, {name: "b"}, {name: "a", list: true}}},
		{"tail interleaved", []op{{name: "b"}, {name: "d"}, {name: "f", list: true}, {name: "e"}, {name: "a"}, {name: "c"}, {name: "g", list: true}}},
		{"delete from the tail", []op{{name: "b"}, {name: "d", list: true}, {name: "c"}, {name: "a"}, {del: true, name: "c", list: true}, {name: "cc", list: true}}},
		{"delete from the head", []op{{name: "b"}, {name: "d", list: true}, {name: "c"}, {del: true, name: "b"}, {name: "a", list: true}}},
		{"put again", []op{{name: "b"}, {name: "a"}, {name: "b", list: true}}},
		{"delete absent", []op{{name: "b"}, {del: true, name: "a", list: true}}},
		{"shuffled 500", shuffled(500, 1)},
		{"shuffled 3000", shuffled(3000, 2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore()
			// other namespaces' names never show
			s.put(pod("other", "zz"))
			want := map[string]bool{}
			for k, o := range append(tc.ops, op{list: true}) {
				switch {
				case o.name == "":
				case o.del:
					s.delete(pod("ns", o.name))
					delete(want, o.name)
				default:
					s.put(pod("ns", o.name))
					want[o.name] = true
				}
				if !o.list {
					continue
				}
				var got []string
				for _, p := range s.list("ns") {
					if p == nil {
						t.Fatalf("step %d: a listed name has no pod", k)
					}
					got = append(got, p.Name)
				}
				exp := make([]string, 0, len(want))
				for n := range want {
					exp = append(exp, n)
				}
				slices.Sort(exp)
				if !slices.Equal(got, exp) {
					t.Fatalf("step %d: list = %v, want %v", k, got, exp)
				}
			}
			if got := s.list("none"); len(got) != 0 {
				t.Errorf("an empty namespace lists %d pods", len(got))
			}
		})
	}
}
