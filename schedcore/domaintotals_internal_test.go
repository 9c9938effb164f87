package schedcore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testShare is a node's share in TestDomainTotalsMatchScratch: its zone
// label's number, counted once per pod but those labelled uncounted
// (testCounts), times 1<<40 on the nodes whose name ends in 7 (a count
// too wide for a share's 32 bits); none for nodes without such pods.
func testShare(ni *NodeInfo) (Domain, int64, bool) {
	var count int64
	for _, p := range ni.Pods {
		if testCounts(p) {
			count++
		}
	}
	if count == 0 {
		return 0, 0, false
	}
	var dom Domain
	if _, err := fmt.Sscanf(ni.Node().Labels["zone"], "z%d", &dom); err != nil {
		return 0, 0, false
	}
	if name := ni.Name(); name[len(name)-1] == '7' {
		count <<= 40
	}
	return dom, count, true
}

// scratchTotals are the totals of testShare over list, computed from
// scratch, trimmed of trailing empty domains.
func scratchTotals(list []*NodeInfo) ([]int64, []int32) {
	var counts []int64
	var members []int32
	for _, ni := range list {
		if ni.Node() == nil {
			continue
		}
		dom, count, ok := testShare(ni)
		if !ok {
			continue
		}
		for int(dom) >= len(counts) {
			counts, members = append(counts, 0), append(members, 0)
		}
		counts[dom] += count
		members[dom]++
	}
	return trimTotals(counts, members)
}

func testCounts(p *PodInfo) bool { return p.Pod.Labels["uncounted"] == "" }

func trimTotals(counts []int64, members []int32) ([]int64, []int32) {
	n := len(members)
	for n > 0 && members[n-1] == 0 && counts[n-1] == 0 {
		n--
	}
	return slices.Clone(counts[:n]), slices.Clone(members[:n])
}

// DomainTotals kept across snapshot updates (synced from the change log:
// every round, every few rounds, past what the log holds, across list
// rebuilds and evictions; filled from scratch by Read, Load,
// LoadSparse and ReadSparse, from candidates or node by node) hold what the totals computed from scratch hold, wide
// counts included.
func TestDomainTotalsMatchScratch(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			c := NewCache(DefaultFeatures)
			nodes := map[string]bool{}
			addNode := func(name string) {
				c.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": fmt.Sprint("z", rng.IntN(4))}}})
				nodes[name] = true
			}
			names := func() []string {
				var ks []string
				for k := range nodes {
					ks = append(ks, k)
				}
				slices.Sort(ks)
				return ks
			}
			for i := range 20 {
				addNode(fmt.Sprint("n", i))
			}
			var pods []*v1.Pod
			nextPod := 0
			addPod := func(node string) {
				p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", nextPod), Namespace: "default", UID: types.UID(fmt.Sprint("p", nextPod))}, Spec: v1.PodSpec{NodeName: node}}
				if rng.IntN(2) == 0 {
					p.Labels = map[string]string{"uncounted": "yes"}
				}
				nextPod++
				if err := c.AddPod(p); err != nil {
					t.Fatal(err)
				}
				pods = append(pods, p)
			}
			s := NewEmptySnapshot()
			caches := []*TotalsCache{NewTotalsCache(4), NewTotalsCache(4), NewTotalsCache(1)}
			every := []int{1, 3, 7}
			for round := range 60 {
				updates := 1 + rng.IntN(3)
				if round == 30 || round == 45 {
					updates = changeLogSize + 100
				}
				for u := range updates {
					op := rng.IntN(11)
					if u >= 3 {
						// Past what the log holds: one node's pod added and
						// removed again and again.
						if u%2 == 1 {
							addPod(names()[0])
						} else {
							c.RemovePod(pods[len(pods)-1])
							pods = pods[:len(pods)-1]
						}
						c.UpdateSnapshot(s)
						continue
					}
					switch {
					case op < 5:
						ns := names()
						addPod(ns[rng.IntN(len(ns))])
					case op < 7 && len(pods) > 0:
						i := rng.IntN(len(pods))
						c.RemovePod(pods[i])
						pods = slices.Delete(pods, i, i+1)
					case op < 8:
						// A node moved to another zone, maybe with a
						// pod more (which may not count) in the same
						// update.
						ns := names()
						name := ns[rng.IntN(len(ns))]
						addNode(name)
						if rng.IntN(2) == 0 {
							addPod(name)
						}
					case op == 10:
						ns := names()
						name := ns[rng.IntN(len(ns))]
						c.RemoveNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
						delete(nodes, name)
						addNode(fmt.Sprint("r", nextPod))
						nextPod++
					case op < 9 && rng.IntN(4) == 0:
						addNode(fmt.Sprint("n", 100+round))
					case len(nodes) > 5 && rng.IntN(4) == 0:
						ns := names()
						name := ns[rng.IntN(len(ns))]
						c.RemoveNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
						delete(nodes, name)
						kept := pods[:0]
						for _, p := range pods {
							if p.Spec.NodeName != name {
								kept = append(kept, p)
							}
						}
						pods = kept
					}
					c.UpdateSnapshot(s)
				}
				wantCounts, wantMembers := scratchTotals(s.List())
				for ci, tc := range caches {
					if round%every[ci] != 0 {
						continue
					}
					for _, kname := range []string{"a", "b", "c"} {
						k := new(MemoKey).String(kname)
						check := func(how string, counts []int64, members []int32) {
							t.Helper()
							gc, gm := trimTotals(counts, members)
							if !slices.Equal(gc, wantCounts) || !slices.Equal(gm, wantMembers) {
								t.Fatalf("round %d, cache %d, key %s, %s: counts %v members %v, want %v %v", round, ci, kname, how, gc, gm, wantCounts, wantMembers)
							}
						}
						withPods := func() ([]*NodeInfo, bool) {
							var nodes []*NodeInfo
							for _, ni := range s.List() {
								if len(ni.Pods) > 0 {
									nodes = append(nodes, ni, ni)
								}
							}
							return nodes, true
						}
						switch (round + ci + int(kname[0])) % 5 {
						case 3:
							tc.ReadSparse(k, s, testShare, withPods, testCounts, func(counts []int64, members []int32) { check("ReadSparse", counts, members) })
						case 4:
							tc.ReadSparse(k, s, testShare, func() ([]*NodeInfo, bool) { return nil, false }, testCounts, func(counts []int64, members []int32) {
								check("ReadSparse, no candidates", counts, members)
							})
						case 0:
							tc.Read(k, s, testShare, func(counts []int64, members []int32) { check("Read", counts, members) })
						case 1:
							into := NewDomainCounts(s, "zone")
							tc.Load(k, s, into, 0, testShare)
							tc.Read(k, s, testShare, func(counts []int64, members []int32) { check("Load then Read", counts, members) })
						case 2:
							into := NewDomainCounts(s, "zone")
							tc.LoadSparse(k, s, into, 0, testShare, withPods, testCounts)
							tc.Read(k, s, testShare, func(counts []int64, members []int32) { check("LoadSparse then Read", counts, members) })
						}
					}
				}
			}
		})
	}
}

// A share packs into 4 bytes when its domain and count fit, and reads
// back as it was; one that does not fit (a negative or too large count, a
// domain past the packed range) is not packed and goes to the wide
// shares, which TestDomainTotalsMatchScratch exercises.
func TestPackShare(t *testing.T) {
	maxDom := Domain(1<<(32-shareCountBits) - 3)
	for _, c := range []struct {
		dom   Domain
		count int64
		fits  bool
	}{
		{0, 0, true}, {0, 1, true}, {3, shareCountMask, true}, {maxDom, shareCountMask, true}, {maxDom, 0, true},
		{0, shareCountMask + 1, false}, {0, -1, false}, {maxDom + 1, 0, false}, {maxDom + 1, shareCountMask, false},
		{-1, 0, false}, {1 << 30, 1, false},
	} {
		s, ok := packShare(c.dom, c.count)
		if ok != c.fits {
			t.Errorf("packShare(%d, %d) fits %v, want %v", c.dom, c.count, ok, c.fits)
			continue
		}
		if !ok {
			continue
		}
		if s == 0 || s == wideShareMark {
			t.Errorf("packShare(%d, %d) = %#x, which reads as no share or a wide one", c.dom, c.count, uint32(s))
		}
		if dom, count := s.unpack(); dom != c.dom || count != c.count {
			t.Errorf("packShare(%d, %d) reads back as %d, %d", c.dom, c.count, dom, count)
		}
	}
}
