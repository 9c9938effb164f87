package schedcore

import (
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Totals of node shares (NewNodeTotalsCache) keep their shares while only
// pods change, without computing them again, and hold what totals
// computed from scratch hold after a node is relabelled in place, added
// or removed.
func TestNodeTotalsFollowNodeObjects(t *testing.T) {
	zoneShare := func(calls *int) func(ni *NodeInfo) (Domain, int64, bool) {
		return func(ni *NodeInfo) (Domain, int64, bool) {
			*calls++
			var dom Domain
			if _, err := fmt.Sscanf(ni.Node().Labels["zone"], "z%d", &dom); err != nil {
				return 0, 0, false
			}
			return dom, 1, true
		}
	}
	scratch := func(list []*NodeInfo) ([]int64, []int32) {
		var counts []int64
		var members []int32
		var calls int
		share := zoneShare(&calls)
		for _, ni := range list {
			dom, n, ok := share(ni)
			if !ok {
				continue
			}
			for int(dom) >= len(counts) {
				counts, members = append(counts, 0), append(members, 0)
			}
			counts[dom] += n
			members[dom]++
		}
		return trimTotals(counts, members)
	}
	node := func(name, zone string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": zone}}}
	}
	pod := func(name, nodeName string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}, Spec: v1.PodSpec{NodeName: nodeName}}
	}
	tests := []struct {
		name   string
		change func(c *Cache)
		// recompute is whether shares must be computed again.
		recompute bool
	}{
		{"pods placed", func(c *Cache) {
			for i := range 5 {
				_ = c.AddPod(pod(fmt.Sprint("p", i), fmt.Sprint("n", i)))
			}
		}, false},
		{"a node relabelled in place", func(c *Cache) { c.AddNode(node("n3", "z2")) }, true},
		{"a pod placed, then a node relabelled", func(c *Cache) {
			_ = c.AddPod(pod("q", "n1"))
			c.AddNode(node("n1", "z3"))
		}, true},
		{"a node added", func(c *Cache) { c.AddNode(node("n9", "z1")) }, true},
		{"a node removed", func(c *Cache) { c.RemoveNode(node("n2", "")) }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(DefaultFeatures)
			for i := range 6 {
				c.AddNode(node(fmt.Sprint("n", i), fmt.Sprint("z", i%2)))
			}
			s := NewEmptySnapshot()
			c.UpdateSnapshot(s)
			tc2 := NewNodeTotalsCache(4)
			mk := new(MemoKey).String("zone")
			var calls int
			read := func() ([]int64, []int32) {
				var counts []int64
				var members []int32
				tc2.Read(mk, s, zoneShare(&calls), func(c []int64, m []int32) { counts, members = trimTotals(c, m) })
				return counts, members
			}
			read()
			tc.change(c)
			c.UpdateSnapshot(s)
			calls = 0
			counts, members := read()
			wantCounts, wantMembers := scratch(s.List())
			if !slices.Equal(counts, wantCounts) || !slices.Equal(members, wantMembers) {
				t.Errorf("totals %v %v, want %v %v", counts, members, wantCounts, wantMembers)
			}
			if got := calls > 0; got != tc.recompute {
				t.Errorf("shares computed again: %v (%d calls), want %v", got, calls, tc.recompute)
			}
		})
	}
}
