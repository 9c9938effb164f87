package schedcore_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// zones are three nodes in two zones and one without the label.
func zones() *schedcore.Snapshot {
	return schedcore.NewSnapshot(nil, []*v1.Node{
		schedtest.MakeNode("a1").Label("zone", "a").Obj(),
		schedtest.MakeNode("b1").Label("zone", "b").Obj(),
		schedtest.MakeNode("x").Obj(),
	})
}

// byValue is key k's counted domains by value.
func byValue(d *schedcore.DomainCounts, k int) map[string]int64 {
	out := map[string]int64{}
	d.ForEach(k, func(dom schedcore.Domain, n int64) { out[d.Value(k, dom)] = n })
	return out
}

func TestDomainCountsCountPerDomain(t *testing.T) {
	snap := zones()
	d := schedcore.NewDomainCounts(snap, "zone")
	for _, ni := range snap.List() {
		d.AddNode(0, ni, 2)
	}
	if d := cmp.Diff(map[string]int64{"a": 2, "b": 2}, byValue(d, 0)); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	x, _ := snap.Get("x")
	if _, ok := d.NodeDomain(0, x); ok {
		t.Error("a node without the label has a domain")
	}
	d.AddNodeOrEmpty(0, x, 1)
	if got := d.At(0, d.ValueDomain(0, "")); got != 1 {
		t.Errorf("the domain \"\" of nodes without the label counts %d, want 1", got)
	}
	if d.NumCounted(0) != 3 || d.NonZero() != 3 {
		t.Errorf("%d domains counted, %d non-zero; want 3 and 3", d.NumCounted(0), d.NonZero())
	}
	a1, _ := snap.Get("a1")
	d.AddNode(0, a1, -2)
	if d.NumCounted(0) != 3 || d.NonZero() != 2 {
		t.Errorf("after zeroing zone a: %d domains counted, %d non-zero; want 3 and 2", d.NumCounted(0), d.NonZero())
	}
}

func TestDomainCountsOfANodeFromOutsideTheSnapshot(t *testing.T) {
	snap := zones()
	d := schedcore.NewDomainCounts(snap, "zone")
	outside := schedcore.NewNodeInfo()
	outside.SetNode(schedtest.MakeNode("c1").Label("zone", "c").Obj())
	if dom, ok := d.NodeDomain(0, outside); !ok || dom != schedcore.NoDomain || d.At(0, dom) != 0 {
		t.Errorf("a value no node has: domain %d, %v; want NoDomain, true, counting 0", dom, ok)
	}
	d.AddNode(0, outside, 5)
	if diff := cmp.Diff(map[string]int64{"c": 5}, byValue(d, 0)); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if dom, _ := d.NodeDomain(0, outside); d.At(0, dom) != 5 {
		t.Errorf("the node's domain counts %d, want 5", d.At(0, dom))
	}
}

// TestDomainCountsNodeDomainsReadEveryKeyOfANode checks NodeDomains
// against NodeDomain key by key: for the snapshot's nodes, a node without
// a label, a node from outside the snapshot, and a node of another
// snapshot at the same list position (whose labels, not the column's
// entry at that position, are its domains), and that AddAt counts where
// AddNodeOrEmpty would.
func TestDomainCountsNodeDomainsReadEveryKeyOfANode(t *testing.T) {
	snap := schedcore.NewSnapshot(nil, []*v1.Node{
		schedtest.MakeNode("a1").Label("zone", "a").Label("rack", "r1").Obj(),
		schedtest.MakeNode("b1").Label("zone", "b").Obj(),
	})
	other := schedcore.NewSnapshot(nil, []*v1.Node{
		schedtest.MakeNode("a1").Label("zone", "b").Label("rack", "r2").Obj(),
	})
	outside := schedcore.NewNodeInfo()
	outside.SetNode(schedtest.MakeNode("c1").Label("zone", "c").Obj())
	a1, _ := snap.Get("a1")
	b1, _ := snap.Get("b1")
	moved, _ := other.Get("a1")
	d := schedcore.NewDomainCounts(snap, "zone", "rack")
	for _, tc := range []struct {
		name string
		ni   *schedcore.NodeInfo
		want []string
		all  bool
	}{
		{"a node of the snapshot with both labels", a1, []string{"a", "r1"}, true},
		{"a node of the snapshot without the rack label", b1, []string{"b", "<no label>"}, false},
		{"a node from outside the snapshot", outside, []string{"<no domain>", "<no label>"}, false},
		{"a node of another snapshot at the same position", moved, []string{"b", "<no domain>"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doms, all := d.NodeDomains(tc.ni, nil)
			var got []string
			for k, dom := range doms {
				one, ok := d.NodeDomain(k, tc.ni)
				switch {
				case dom == schedcore.NoLabel:
					got = append(got, "<no label>")
					if ok {
						t.Errorf("key %d: NodeDomains says no label, NodeDomain gives %d", k, one)
					}
				case dom == schedcore.NoDomain:
					got = append(got, "<no domain>")
				default:
					got = append(got, d.Value(k, dom))
				}
				if dom != schedcore.NoLabel && (!ok || one != dom) {
					t.Errorf("key %d: NodeDomains gives %d, NodeDomain %d, %v", k, dom, one, ok)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || all != tc.all {
				t.Errorf("domains (-want +got):\n%s; all %v, want %v", diff, all, tc.all)
			}
		})
	}
	for _, ni := range []*schedcore.NodeInfo{a1, b1, outside} {
		doms, _ := d.NodeDomains(ni, nil)
		for k, dom := range doms {
			d.AddAt(k, ni, dom, 1)
		}
	}
	if diff := cmp.Diff([]map[string]int64{{"a": 1, "b": 1, "c": 1}, {"r1": 1, "": 2}}, []map[string]int64{byValue(d, 0), byValue(d, 1)}); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// TestDomainCountsClonesCopyOnWrite checks that a write to a clone (as
// AddPod and RemovePod make) never shows in the original or in another
// clone, whichever side writes first.
func TestDomainCountsClonesCopyOnWrite(t *testing.T) {
	snap := zones()
	a1, _ := snap.Get("a1")
	orig := schedcore.NewDomainCounts(snap, "zone")
	orig.AddNode(0, a1, 1)
	c1, c2 := orig.Clone(), orig.Clone()
	c1.AddNode(0, a1, 10)
	c2.AddNode(0, a1, 100)
	orig.AddNode(0, a1, 1000)
	c3 := c1.Clone()
	c1.AddNode(0, a1, 10000)
	for _, tt := range []struct {
		name string
		d    *schedcore.DomainCounts
		want int64
	}{{"original", orig, 1001}, {"first clone", c1, 10011}, {"second clone", c2, 101}, {"clone of the first clone", c3, 11}} {
		if dom, _ := tt.d.NodeDomain(0, a1); tt.d.At(0, dom) != tt.want {
			t.Errorf("%s counts %d, want %d", tt.name, tt.d.At(0, dom), tt.want)
		}
	}
	// Keys added to a clone are its own.
	c2.AddKey("zone")
	if orig.NumKeys() != 1 || c2.NumKeys() != 2 {
		t.Errorf("keys: original %d, clone %d; want 1 and 2", orig.NumKeys(), c2.NumKeys())
	}
}

// TestDomainCountsClonedConcurrently is the framework's pattern: parallel
// Filter calls clone one state and write their clones (the race detector
// watches).
func TestDomainCountsClonedConcurrently(t *testing.T) {
	snap := zones()
	b1, _ := snap.Get("b1")
	orig := schedcore.NewDomainCounts(snap, "zone")
	orig.AddNode(0, b1, 1)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := orig.Clone()
			c.AddNode(0, b1, int64(i))
			if dom, _ := c.NodeDomain(0, b1); c.At(0, dom) != int64(1+i) {
				t.Errorf("clone %d counts %d", i, c.At(0, dom))
			}
		}()
	}
	wg.Wait()
	if dom, _ := orig.NodeDomain(0, b1); orig.At(0, dom) != 1 {
		t.Errorf("the original counts %d, want 1", orig.At(0, dom))
	}
}

func TestNodeValues(t *testing.T) {
	snap := zones()
	v := schedcore.NewNodeValues[int](snap)
	a1, _ := snap.Get("a1")
	b1, _ := snap.Get("b1")
	v.Set(a1, 7)
	if got, ok := v.Get(a1); !ok || got != 7 {
		t.Errorf("Get(a1) = %d, %v; want 7, true", got, ok)
	}
	if _, ok := v.Get(b1); ok || !v.Covers(b1) {
		t.Error("an unset node of the snapshot has a value, or is not covered")
	}
	outside := schedcore.NewNodeInfo()
	outside.SetNode(schedtest.MakeNode("a1").Obj())
	v.Set(outside, 9)
	if _, ok := v.Get(outside); ok || v.Covers(outside) {
		t.Error("a node from outside the snapshot has a value, or is covered")
	}
}

// TestMemoKeysTellTheirPartsApart: two different sequences of parts never
// give the same key (that would share remembered values between inputs
// that differ).
func TestMemoKeysTellTheirPartsApart(t *testing.T) {
	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	keys := map[string]*schedcore.MemoKey{
		"ab,c":        new(schedcore.MemoKey).String("ab").String("c"),
		"a,bc":        new(schedcore.MemoKey).String("a").String("bc"),
		"int 1":       new(schedcore.MemoKey).Int(1),
		"string 1":    new(schedcore.MemoKey).String("\x02"),
		"nil":         new(schedcore.MemoKey).Selector(nil),
		"everything":  new(schedcore.MemoKey).Selector(labels.Everything()),
		"nothing":     new(schedcore.MemoKey).Selector(labels.Nothing()),
		"app=web":     new(schedcore.MemoKey).Selector(sel("app=web")),
		"map a=b":     new(schedcore.MemoKey).Map(map[string]string{"a": "b"}),
		"map ab":      new(schedcore.MemoKey).Map(map[string]string{"ab": ""}),
		"set a,b":     new(schedcore.MemoKey).Set(sets.New("a", "b")),
		"set ab":      new(schedcore.MemoKey).Set(sets.New("ab")),
		"empty map":   new(schedcore.MemoKey).Map(nil),
		"empty set":   new(schedcore.MemoKey).Set(nil),
		"no parts":    new(schedcore.MemoKey),
		"empty bytes": new(schedcore.MemoKey).Bytes(nil),
	}
	seen := map[string]string{}
	for name, k := range keys {
		if other, dup := seen[k.Key()]; dup {
			t.Errorf("%q and %q give the same key", name, other)
		}
		seen[k.Key()] = name
	}
	if new(schedcore.MemoKey).Map(map[string]string{"a": "1", "b": "2"}).Key() != new(schedcore.MemoKey).Map(map[string]string{"b": "2", "a": "1"}).Key() {
		t.Error("a map's key depends on its iteration order")
	}
}

// A nil DomainCounts (a plugin state built without counts) has no keys.
func TestNilDomainCountsHasNoDomains(t *testing.T) {
	var d *schedcore.DomainCounts
	doms, all := d.NodeDomains(schedcore.NewNodeInfo(), nil)
	if len(doms) != 0 || !all {
		t.Errorf("nil DomainCounts: domains %v, all %v; want none, true", doms, all)
	}
}

// TestNodeDomainsOfAnyNode: NodeDomains reads a node of the counts'
// snapshot by its list position in the label columns; a copy of a listed
// node (the filter loop's nodes with nominated pods added), a node of
// another snapshot or one from outside are read from their labels. Each
// answers what its labels say.
func TestNodeDomainsOfAnyNode(t *testing.T) {
	snap := schedcore.NewSnapshot(nil, []*v1.Node{
		schedtest.MakeNode("a1").Label("zone", "a").Label("rack", "r1").Obj(),
		schedtest.MakeNode("b1").Label("zone", "b").Obj(),
		schedtest.MakeNode("x").Label("rack", "r2").Obj(),
		schedtest.MakeNode("b2").Label("zone", "b").Label("rack", "r2").Obj(),
	})
	other := schedcore.NewSnapshot(nil, []*v1.Node{
		schedtest.MakeNode("a1").Label("zone", "c").Label("rack", "r3").Obj(),
	})
	outside := schedcore.NewNodeInfo()
	outside.SetNode(schedtest.MakeNode("c1").Label("zone", "a").Obj())
	moved, _ := other.Get("a1")
	nodes := append([]*schedcore.NodeInfo{outside, moved}, snap.List()...)
	for _, ni := range snap.List() {
		nodes = append(nodes, ni.Clone())
	}
	keys := []string{"zone", "rack", "zone"}
	d := schedcore.NewDomainCounts(snap, keys...)
	for _, ni := range nodes {
		var want []schedcore.Domain
		wantAll := true
		for k, key := range keys {
			v, ok := ni.Node().Labels[key]
			if !ok {
				want, wantAll = append(want, schedcore.NoLabel), false
				continue
			}
			want = append(want, d.ValueDomain(k, v))
		}
		got, all := d.NodeDomains(ni, nil)
		if diff := cmp.Diff(want, got); diff != "" || all != wantAll {
			t.Errorf("%s: NodeDomains differs from its labels (-want +got):\n%s; all %v, want %v", ni.Node().Name, diff, all, wantAll)
		}
	}
}
