package schedcore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A SelectorCount keeps the index's non-zero counts as they are only when
// their positions are ascending (sparseAt searches them) and few; the
// counts read back are the ones put in, by position, either way.
func TestSparseCountsNeedAscendingPositions(t *testing.T) {
	for _, tc := range []struct {
		name string
		pos  []int32
		n    int
		want bool
	}{
		{"no counts", nil, 5000, true},
		{"a few ascending", []int32{3, 9, 4000}, 5000, true},
		{"a repeated position", []int32{3, 3}, 5000, false},
		{"out of order", []int32{9, 3}, 5000, false},
		{"too many for the list", make([]int32, 9), 16, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sparseCounts(tc.pos, tc.n); got != tc.want {
				t.Errorf("sparseCounts(%v, %d) = %v, want %v", tc.pos, tc.n, got, tc.want)
			}
		})
	}
	c := SelectorCount{nzPos: []int32{3, 9, 4000}, nzCount: []int32{1, 2, 3}}
	for pos, want := range map[int]int32{0: 0, 3: 1, 4: 0, 9: 2, 3999: 0, 4000: 3, 4999: 0} {
		if got := c.sparseAt(pos); got != want {
			t.Errorf("sparseAt(%d) = %d, want %d", pos, got, want)
		}
	}
}

// A PodLabelIndex kept across snapshot updates (a placement's pod indexed
// alone, after the node's others: appended) holds the postings, pods in
// the same order, that an index built from scratch holds, as pods are
// added, removed and relabelled and nodes come and go.
func TestPodLabelIndexMatchesScratch(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			c := NewCache(DefaultFeatures)
			nodes := []string{}
			addNode := func(name string) {
				c.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
				nodes = append(nodes, name)
			}
			for i := range 12 {
				addNode(fmt.Sprint("n", i))
			}
			var pods []*v1.Pod
			next := 0
			s := NewEmptySnapshot()
			kept := NewPodLabelIndex()
			for round := range 200 {
				for range 1 + rng.IntN(3) {
					switch op := rng.IntN(12); {
					case op < 6 || len(pods) == 0:
						next++
						lbl := map[string]string{"app": fmt.Sprint("a", rng.IntN(3))}
						if rng.IntN(2) == 0 {
							lbl["tier"] = fmt.Sprint("t", rng.IntN(2))
						}
						p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", next), UID: types.UID(fmt.Sprint("p", next)),
							Namespace: []string{"default", "other"}[rng.IntN(2)], Labels: lbl}, Spec: v1.PodSpec{NodeName: nodes[rng.IntN(len(nodes))]}}
						if err := c.AddPod(p); err != nil {
							t.Fatal(err)
						}
						pods = append(pods, p)
					case op < 8:
						i := rng.IntN(len(pods))
						upd := pods[i].DeepCopy()
						upd.Labels["app"] = fmt.Sprint("a", rng.IntN(3))
						if err := c.UpdatePod(pods[i], upd); err != nil {
							t.Fatal(err)
						}
						pods[i] = upd
					case op < 10:
						i := rng.IntN(len(pods))
						c.RemovePod(pods[i])
						pods = slices.Delete(pods, i, i+1)
					case op < 11:
						addNode(fmt.Sprint("m", round))
					case len(nodes) > 4:
						i := rng.IntN(len(nodes))
						name := nodes[i]
						c.RemoveNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
						nodes = slices.Delete(nodes, i, i+1)
						pods = slices.DeleteFunc(pods, func(p *v1.Pod) bool { return p.Spec.NodeName == name })
					}
				}
				c.UpdateSnapshot(s)
				scratch := NewPodLabelIndex()
				for _, x := range []*PodLabelIndex{kept, scratch} {
					x.mu.Lock()
					x.sync(s)
					x.mu.Unlock()
				}
				if got, want := postingsOf(kept), postingsOf(scratch); !cmp.Equal(want, got) {
					t.Fatalf("round %d: postings kept differ from scratch (-scratch +kept):\n%s", round, cmp.Diff(want, got))
				}
			}
		})
	}
}

// postingsOf lists an index's postings: per label pair, each pod's
// position and name, in posting order.
func postingsOf(x *PodLabelIndex) map[string][]string {
	out := map[string][]string{}
	for key, p := range x.byKey {
		for j := range p.pos {
			out[key] = append(out[key], fmt.Sprint(p.pos[j], "/", p.pods[j].Pod.Name))
		}
	}
	return out
}
