package explain

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// samePod finds, by the index, the pods a search of the cluster's pods
// finds (namesakes in several namespaces, shared and missing UIDs), in the
// cluster's order; and it searches once the State lists other pods than
// the indexed ones.
func TestSamePodFindsWhatASearchFinds(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	pods := func() []*v1.Pod {
		var out []*v1.Pod
		for i := 0; i < 60; i++ {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprint("ns", rng.Intn(3)), Name: fmt.Sprint("p", rng.Intn(20))}}
			if rng.Intn(3) > 0 {
				p.UID = types.UID(fmt.Sprint("u", rng.Intn(25)))
			}
			out = append(out, p)
		}
		return out
	}
	search := func(all []*v1.Pod, ns, name string, uid types.UID) []*v1.Pod {
		var out []*v1.Pod
		for _, p := range all {
			if p.Namespace == ns && p.Name == name || uid != "" && p.UID == uid {
				out = append(out, p)
			}
		}
		return out
	}
	indexed := pods()
	s := &State{cluster: &snapshot.Cluster{Pods: indexed}, index: newPodIndex(indexed)}
	other := pods() // as many pods, other ones
	for round := 0; round < 2; round++ {
		if round == 1 {
			s.cluster = &snapshot.Cluster{Pods: other}
		}
		for k := 0; k < 300; k++ {
			ns, name := fmt.Sprint("ns", rng.Intn(3)), fmt.Sprint("p", rng.Intn(20))
			var uid types.UID
			if rng.Intn(2) == 0 {
				uid = types.UID(fmt.Sprint("u", rng.Intn(25)))
			}
			want := search(s.cluster.Pods, ns, name, uid)
			if got := s.samePod(ns, name, uid); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("round %d: samePod(%s/%s, %q) = %d pods, a search finds %d", round, ns, name, uid, len(got), len(want))
			}
		}
	}
}
