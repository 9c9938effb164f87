package interpodaffinity

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestTermIndexMatchingListsEveryMatchingGroup: PreScore and
// existingCounts match the incoming pod only against the groups
// termIndex.matching lists (by a label pair their term requires); every
// group whose term selects the pod must be among them, once, for
// selectors of every kind (match labels, In with one or more values,
// NotIn, Exists, DoesNotExist, everything, nothing), as groups come and go.
func TestTermIndexMatchingListsEveryMatchingGroup(t *testing.T) {
	rng := rand.New(rand.NewSource(37))
	keys, vals := []string{"app", "tier", "team"}, []string{"a", "b", "c"}
	randomSelector := func() labels.Selector {
		ls := &metav1.LabelSelector{}
		for range rng.Intn(3) {
			k := keys[rng.Intn(len(keys))]
			switch rng.Intn(6) {
			case 0:
				if ls.MatchLabels == nil {
					ls.MatchLabels = map[string]string{}
				}
				ls.MatchLabels[k] = vals[rng.Intn(len(vals))]
			case 1:
				ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{vals[rng.Intn(3)]}})
			case 2:
				ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{vals[rng.Intn(3)], vals[rng.Intn(3)]}})
			case 3:
				ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpNotIn, Values: []string{vals[rng.Intn(3)]}})
			case 4:
				ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpExists})
			case 5:
				ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpDoesNotExist})
			}
		}
		if rng.Intn(20) == 0 {
			return labels.Nothing()
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	x := newTermIndex(1)
	var live [][]termEntry
	matched := 0
	for step := range 400 {
		if rng.Intn(3) > 0 || len(live) == 0 {
			term := schedcore.AffinityTerm{Namespaces: sets.New("default"), Selector: randomSelector(), TopologyKey: "zone"}
			es := x.add(nil, &term, int64(1+rng.Intn(3)), fmt.Sprint("z", rng.Intn(3)))
			x.apply(es, 1)
			live = append(live, es)
		} else {
			i := rng.Intn(len(live))
			x.apply(live[i], -1)
			live = append(live[:i], live[i+1:]...)
		}
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Labels: map[string]string{}}}
		for _, k := range keys {
			if rng.Intn(3) > 0 {
				pod.Labels[k] = vals[rng.Intn(len(vals))]
			}
		}
		seen := map[*termGroup]int{}
		x.matching(pod, func(g *termGroup) { seen[g]++ })
		for _, g := range x.groups {
			if seen[g] > 1 {
				t.Fatalf("step %d: group %s listed %d times", step, g.term.Selector, seen[g])
			}
			if g.term.Matches(pod, nil) {
				matched++
				if seen[g] == 0 {
					t.Fatalf("step %d: group with selector %q matches pod labels %v but is not listed", step, g.term.Selector, pod.Labels)
				}
			}
		}
		for g := range seen {
			if x.groups[g.key] != g {
				t.Fatalf("step %d: a group no longer indexed (%q) is listed", step, g.term.Selector)
			}
		}
	}
	if matched < 100 {
		t.Errorf("only %d matches: the case is too thin", matched)
	}
}
