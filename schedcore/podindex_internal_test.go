package schedcore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
// added, removed and relabelled and nodes come and go, and as a label key
// is first asked for (want) on nodes already indexed: "app" before the
// first sync, "tier" half-way.
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
			kept.want("app")
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
				kept.mu.Lock()
				kept.sync(s)
				if round == 100 {
					kept.want("tier")
				}
				kept.mu.Unlock()
				scratch := NewPodLabelIndex()
				for _, k := range kept.keys {
					scratch.want(k)
				}
				scratch.sync(s)
				if got, want := postingsOf(kept), postingsOf(scratch); !cmp.Equal(want, got) {
					t.Fatalf("round %d: postings kept differ from scratch (-scratch +kept):\n%s", round, cmp.Diff(want, got))
				}
				tiers := 0
				for key := range kept.byKey {
					if strings.Contains(key, "\x00tier\x00") {
						tiers++
					}
				}
				if round < 100 && tiers > 0 || round >= 100 && tiers == 0 {
					t.Fatalf("round %d: %d postings of tier, which is asked for from round 100", round, tiers)
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

// A node's pods are appended at the end of their postings only when every
// posting's runs are before the node's position (appendRuns): a node whose
// slot held no postings (its pods unlabelled, or a fresh slot) that gets
// labelled pods ahead of a node already indexed under the same label pair
// has its run put before that node's, as an index built from scratch
// holds it.
func TestPodLabelIndexAppendsOnlyAfterLastRun(t *testing.T) {
	pod := func(name, node string, labels map[string]string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Namespace: "default", Labels: labels},
			Spec: v1.PodSpec{NodeName: node}}
	}
	app := map[string]string{"app": "x"}
	for _, tc := range []struct {
		name string
		// before and after are the pods of the first and second node in
		// list order (nil labels: unlabelled), before and after the
		// change; the index is synced at each.
		firstBefore, firstAfter   []map[string]string
		secondBefore, secondAfter []map[string]string
	}{
		{name: "unlabelled pods replaced by labelled ones ahead of a labelled node",
			firstBefore: []map[string]string{nil, nil, nil}, firstAfter: []map[string]string{app, app, app},
			secondBefore: []map[string]string{app}, secondAfter: []map[string]string{app}},
		{name: "labelled pods behind a labelled node",
			firstBefore: []map[string]string{app}, firstAfter: []map[string]string{app},
			secondBefore: []map[string]string{nil, nil, nil}, secondAfter: []map[string]string{app, app, app}},
		{name: "both nodes labelled at once",
			firstBefore: []map[string]string{nil, nil, nil}, firstAfter: []map[string]string{app, app, app},
			secondBefore: []map[string]string{nil, nil, nil}, secondAfter: []map[string]string{app, app, app}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(DefaultFeatures)
			for _, n := range []string{"a", "b"} {
				c.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
			}
			s := NewEmptySnapshot()
			c.UpdateSnapshot(s)
			first, second := s.List()[0].Node().Name, s.List()[1].Node().Name
			var added []*v1.Pod
			place := func(tag, node string, lbls []map[string]string) {
				for k, l := range lbls {
					p := pod(fmt.Sprint(tag, k), node, l)
					if err := c.AddPod(p); err != nil {
						t.Fatal(err)
					}
					added = append(added, p)
				}
			}
			place("first-before-", first, tc.firstBefore)
			place("second-before-", second, tc.secondBefore)
			c.UpdateSnapshot(s)
			kept := NewPodLabelIndex()
			kept.mu.Lock()
			kept.want("app")
			kept.sync(s)
			kept.mu.Unlock()
			for _, p := range added {
				c.RemovePod(p)
			}
			place("first-after-", first, tc.firstAfter)
			place("second-after-", second, tc.secondAfter)
			c.UpdateSnapshot(s)
			scratch := NewPodLabelIndex()
			scratch.want("app")
			for _, x := range []*PodLabelIndex{kept, scratch} {
				x.mu.Lock()
				x.sync(s)
				x.mu.Unlock()
			}
			if got, want := postingsOf(kept), postingsOf(scratch); !cmp.Equal(want, got) {
				t.Fatalf("postings kept differ from scratch (-scratch +kept):\n%s", cmp.Diff(want, got))
			}
		})
	}
}

// BenchmarkPodLabelIndexFirstSync is the index's first build on a
// 5000-node snapshot of 10000 pods with two labels each (an app and its
// template hash, 500 apps), what the first explanation after loading a
// snapshot pays.
func BenchmarkPodLabelIndexFirstSync(b *testing.B) {
	c := NewCache(DefaultFeatures)
	for i := range 5000 {
		c.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i)}})
	}
	for i := range 10000 {
		app := fmt.Sprint("app-", i%500)
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i), UID: types.UID(fmt.Sprint("p", i)), Namespace: "default",
			Labels: map[string]string{"app": app, "pod-template-hash": app + "-h"}}, Spec: v1.PodSpec{NodeName: fmt.Sprint("n", (i*7919)%5000)}}
		if err := c.AddPod(p); err != nil {
			b.Fatal(err)
		}
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	b.ReportAllocs()
	for b.Loop() {
		x := NewPodLabelIndex()
		x.mu.Lock()
		x.sync(s)
		x.mu.Unlock()
	}
}
