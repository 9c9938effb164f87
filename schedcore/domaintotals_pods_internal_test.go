package schedcore

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// countedShare is a node's share for TestDomainTotalsKeepUncountedPods:
// its zone label's number, once per pod labelled counted (countedPod);
// none without such pods.
func countedShare(ni *NodeInfo) (Domain, int64, bool) {
	var dom Domain
	if _, err := fmt.Sscanf(ni.Node().Labels["zone"], "z%d", &dom); err != nil {
		return 0, 0, false
	}
	var n int64
	for _, p := range ni.Pods {
		if countedPod(p) {
			n++
		}
	}
	return dom, n, n > 0
}

func countedPod(p *PodInfo) bool { return p.Pod.Labels["counted"] == "yes" }

// Totals synced with a PodCounts keep the share of a node replaced by one
// with a pod more that does not count, and only then: the pod counts, the
// node object changed too, or other pods changed as well (the pod list
// is not the old one with a pod appended) each make the share computed
// again. Each case fails when the check that covers it is taken out
// (appendedPod's node and pod comparisons, sync's counts call).
func TestDomainTotalsKeepUncountedPods(t *testing.T) {
	type step struct {
		addPods    []bool // counted or not, added on n0 in this order
		removePods []int  // indexes (in creation order) of pods removed from n0
		zone       string // n0's zone label after the step ("": unchanged)
	}
	for _, c := range []struct {
		name  string
		start []bool // pods on n0 before the totals are filled
		step  step
	}{
		{"uncounted pod added", []bool{true}, step{addPods: []bool{false}}},
		{"counted pod added", []bool{true}, step{addPods: []bool{true}}},
		{"uncounted then counted pod added", []bool{true}, step{addPods: []bool{false, true}}},
		{"counted pod added to a node without share", []bool{false}, step{addPods: []bool{true}}},
		{"uncounted pod added, node moved to another zone", []bool{true}, step{addPods: []bool{false}, zone: "z2"}},
		{"last pod replaced by a counted and an uncounted pod", []bool{true, false}, step{removePods: []int{1}, addPods: []bool{true, false}}},
		{"counted pod removed, two uncounted added", []bool{false, true}, step{removePods: []int{1}, addPods: []bool{false, false}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := NewCache(DefaultFeatures)
			node := func(zone string) *v1.Node {
				return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0", Labels: map[string]string{"zone": zone}}}
			}
			cache.AddNode(node("z1"))
			cache.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "z1"}}})
			var pods []*v1.Pod
			add := func(counted bool) {
				name := fmt.Sprint("p", len(pods))
				p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}, Spec: v1.PodSpec{NodeName: "n0"}}
				if counted {
					p.Labels = map[string]string{"counted": "yes"}
				}
				if err := cache.AddPod(p); err != nil {
					t.Fatal(err)
				}
				pods = append(pods, p)
			}
			for _, counted := range c.start {
				add(counted)
			}
			s := NewEmptySnapshot()
			cache.UpdateSnapshot(s)
			tc := NewTotalsCache(4)
			k := new(MemoKey).String("k")
			read := func() ([]int64, []int32) {
				var counts []int64
				var members []int32
				tc.ReadSparse(k, s, countedShare, func() ([]*NodeInfo, bool) { return nil, false }, countedPod, func(cs []int64, ms []int32) {
					counts, members = trimTotals(cs, ms)
				})
				return counts, members
			}
			read()
			for _, i := range c.step.removePods {
				cache.RemovePod(pods[i])
			}
			for _, counted := range c.step.addPods {
				add(counted)
			}
			if c.step.zone != "" {
				cache.UpdateNode(nil, node(c.step.zone))
			}
			cache.UpdateSnapshot(s)
			var want []int64
			var wantMembers []int32
			for _, ni := range s.List() {
				dom, count, ok := countedShare(ni)
				if !ok {
					continue
				}
				for int(dom) >= len(want) {
					want, wantMembers = append(want, 0), append(wantMembers, 0)
				}
				want[dom] += count
				wantMembers[dom]++
			}
			want, wantMembers = trimTotals(want, wantMembers)
			if got, gotMembers := read(); !slices.Equal(got, want) || !slices.Equal(gotMembers, wantMembers) {
				t.Fatalf("kept totals: counts %v members %v, want %v %v", got, gotMembers, want, wantMembers)
			}
		})
	}
}
