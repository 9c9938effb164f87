package schedcore_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// nodeSummary is what the slots hold for a node: its name, labels and
// pods, so that a stale slot shows.
func nodeSummary(ni *schedcore.NodeInfo) string {
	var pods []string
	for _, pi := range ni.Pods {
		pods = append(pods, pi.Pod.Name)
	}
	slices.Sort(pods)
	return fmt.Sprintf("%s %v %s", ni.Name(), ni.Node().Labels, strings.Join(pods, ","))
}

// NodeSlots synced from the snapshot's change log hold, after any mix of
// pods and nodes added and removed, node labels changed, and any number of
// snapshot updates between two syncs (past what the log holds), what a
// slot computed from scratch holds, and drop sees every slot cut.
func TestNodeSlotsSyncSnapshotMatchesScratch(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			c := schedcore.NewCache(schedcore.DefaultFeatures)
			nodes := map[string]bool{}
			addNode := func(name string) {
				c.AddNode(schedtest.MakeNode(name).Label("zone", fmt.Sprint("z", rng.IntN(3))).Capacity("pods", "1000").Obj())
				nodes[name] = true
			}
			for i := range 20 {
				addNode(fmt.Sprint("n", i))
			}
			var pods []*v1.Pod
			s := schedcore.NewEmptySnapshot()
			// Slots synced every round, and every few rounds; live
			// counts the slots that hold a value (refreshed, not dropped).
			type tracker struct {
				slots schedcore.NodeSlots[string]
				live  int
				every int
			}
			trackers := []*tracker{{every: 1}, {every: 3}, {every: 11}}
			nextPod := 0
			for round := range 60 {
				updates := 1 + rng.IntN(3)
				if round == 30 || round == 45 {
					// Past what the change log holds: the changes of the
					// first updates are no longer in it.
					updates = schedcore.ChangeLogSize + 100
				}
				for u := range updates {
					op := rng.IntN(11)
					if u >= 3 {
						op = 0
					}
					switch {
					case op == 0 && u >= 3: // a pod added to or removed from the first node
						burst := schedtest.MakePod("burst").UID("burst").Node(sortedKeys(nodes)[0]).Obj()
						if u%2 == 1 {
							if err := c.AddPod(burst); err != nil {
								t.Fatal(err)
							}
						} else {
							c.RemovePod(burst)
						}
					case op < 5: // a pod added to a node
						names := sortedKeys(nodes)
						p := schedtest.MakePod(fmt.Sprint("p", nextPod)).UID(fmt.Sprint("p", nextPod)).Node(names[rng.IntN(len(names))]).Obj()
						nextPod++
						if err := c.AddPod(p); err != nil {
							t.Fatal(err)
						}
						pods = append(pods, p)
					case op < 7 && len(pods) > 0: // a pod removed
						i := rng.IntN(len(pods))
						c.RemovePod(pods[i])
						pods = slices.Delete(pods, i, i+1)
					case op < 8: // a node's labels changed
						names := sortedKeys(nodes)
						addNode(names[rng.IntN(len(names))])
					case op == 10: // a node replaced by another: same list length
						names := sortedKeys(nodes)
						name := names[rng.IntN(len(names))]
						c.RemoveNode(schedtest.MakeNode(name).Obj())
						delete(nodes, name)
						addNode(fmt.Sprint("r", nextPod))
						nextPod++
					case op < 9 && rng.IntN(4) == 0: // a node added
						addNode(fmt.Sprint("n", 100+round))
					case len(nodes) > 5 && rng.IntN(4) == 0: // a node removed
						names := sortedKeys(nodes)
						name := names[rng.IntN(len(names))]
						c.RemoveNode(schedtest.MakeNode(name).Obj())
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
				list := s.List()
				for _, tr := range trackers {
					if round%tr.every != 0 {
						continue
					}
					tr.slots.SyncSnapshot(s, func(v *string) {
						if *v != "" {
							tr.live--
						}
					}, func(ni *schedcore.NodeInfo, v *string) {
						if *v == "" {
							tr.live++
						}
						*v = nodeSummary(ni)
					})
					var want []string
					for _, ni := range list {
						want = append(want, nodeSummary(ni))
					}
					if got := tr.slots.Values(); !slices.Equal(got, want) {
						t.Fatalf("round %d, synced every %d: slots\n%q\nwant\n%q", round, tr.every, got, want)
					}
					if tr.live != len(list) {
						t.Fatalf("round %d, synced every %d: %d slots live, want %d", round, tr.every, tr.live, len(list))
					}
				}
			}
		})
	}
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
