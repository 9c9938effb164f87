package schedcore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSnapshotPlacement transcribes kube's TestSnapshot_Placement
// (backend/cache/snapshot_test.go), with our one difference: a placement
// is matched with the snapshot's nodes by name.
func TestSnapshotPlacement(t *testing.T) {
	names := func(l []*NodeInfo) []string {
		out := []string{}
		for _, ni := range l {
			out = append(out, ni.Name())
		}
		return out
	}
	type result struct {
		Num       int
		List      []string
		InPlace   map[string]bool
		Err       string
		Placement string
	}
	look := func(snap *Snapshot) result {
		r := result{Num: snap.NumNodesInPlacement(), List: names(snap.ListNodesInPlacement()), InPlace: map[string]bool{}}
		for _, n := range []string{"n0", "n1", "n2", "n3", "nx"} {
			_, err := snap.GetNodeInPlacement(n)
			r.InPlace[n] = err == nil
		}
		if name, _, ok := snap.Placement(); ok {
			r.Placement = name
		}
		return r
	}
	all := map[string]bool{"n0": true, "n1": true, "n2": true, "n3": true, "nx": false}
	tests := []struct {
		name      string
		placement []string
		forget    bool
		want      result
	}{
		{name: "no placement: the snapshot's nodes", want: result{Num: 4, List: []string{"n0", "n1", "n2", "n3"}, InPlace: all}},
		{name: "a placement: its nodes, in its order", placement: []string{"n3", "n1"},
			want: result{Num: 2, List: []string{"n3", "n1"}, InPlace: map[string]bool{"n0": false, "n1": true, "n2": false, "n3": true, "nx": false}, Placement: "p"}},
		{name: "a placement of no node", placement: []string{},
			want: result{Num: 0, List: []string{}, InPlace: map[string]bool{"n0": false, "n1": false, "n2": false, "n3": false, "nx": false}, Placement: "p"}},
		{name: "a placement of every node is none", placement: []string{"n2", "n0", "n1", "n3"}, want: result{Num: 4, List: []string{"n0", "n1", "n2", "n3"}, InPlace: all}},
		{name: "forgotten: the snapshot's nodes", placement: []string{"n3", "n1"}, forget: true, want: result{Num: 4, List: []string{"n0", "n1", "n2", "n3"}, InPlace: all}},
		{name: "a node the snapshot does not list: error, no placement", placement: []string{"n1", "nx"},
			want: result{Num: 4, List: []string{"n0", "n1", "n2", "n3"}, InPlace: all, Err: "node nx in placement is not present in snapshot"}},
		{name: "a node twice: error, no placement", placement: []string{"n1", "n1"},
			want: result{Num: 4, List: []string{"n0", "n1", "n2", "n3"}, InPlace: all, Err: `node n1 is more than once in placement "p"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := assumeTestCacheSnapshot(assumeTestCache(nil, nil))
			var got result
			if tt.placement != nil {
				var nodes []*NodeInfo
				for _, n := range tt.placement {
					ni := snap.NodeInfo(n)
					if ni == nil {
						ni = NewNodeInfo()
						ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
					}
					nodes = append(nodes, ni)
				}
				err := snap.AssumePlacement("p", nodes)
				if tt.forget {
					snap.ForgetPlacement()
				}
				got = look(snap)
				if err != nil {
					got.Err = err.Error()
				}
			} else {
				got = look(snap)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// List and Get are never restricted.
			if n := len(snap.List()); n != 4 {
				t.Errorf("List: %d nodes, want 4", n)
			}
			if _, err := snap.Get("n0"); err != nil {
				t.Errorf("Get(n0): %v", err)
			}
		})
	}
}

// TestSnapshotPlacementSeesAssumedPods: in a placement, ListNodesInPlacement
// and GetNodeInPlacement give the node's NodeInfo with the pods assumed
// on it, the very one Get gives, and without them after the forget; a
// placement set after a forget, from NodeInfos listed before the assume,
// takes the snapshot's current ones.
func TestSnapshotPlacementSeesAssumedPods(t *testing.T) {
	snap := assumeTestCacheSnapshot(assumeTestCache(nil, nil))
	orig := []*NodeInfo{snap.NodeInfo("n2"), snap.NodeInfo("n1")}
	if err := snap.AssumePlacement("p", orig); err != nil {
		t.Fatal(err)
	}
	check := func(step string, pods int) {
		t.Helper()
		list := snap.ListNodesInPlacement()
		inPlace, err := snap.GetNodeInPlacement("n1")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		got, _ := snap.Get("n1")
		if list[1] != inPlace || inPlace != got {
			t.Fatalf("%s: ListNodesInPlacement, GetNodeInPlacement and Get give different NodeInfos for n1", step)
		}
		if len(got.Pods) != pods {
			t.Fatalf("%s: n1 has %d pods, want %d", step, len(got.Pods), pods)
		}
	}
	p := assumeTestPod("p0", "n1", false, false, false)
	if err := snap.AssumePod(NewPodInfo(p)); err != nil {
		t.Fatal(err)
	}
	check("assumed", 1)
	if _, nodes, _ := snap.Placement(); nodes[1] != orig[1] {
		t.Fatal("Placement does not return the nodes as given")
	}
	if err := snap.ForgetPod(p); err != nil {
		t.Fatal(err)
	}
	check("forgotten", 0)
	if err := snap.AssumePod(NewPodInfo(p)); err != nil {
		t.Fatal(err)
	}
	if err := snap.AssumePlacement("p", orig); err != nil {
		t.Fatal(err)
	}
	check("placement set again while assumed", 1)
}
