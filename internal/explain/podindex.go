package explain

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podIndex finds the pods of a list that never changes by namespace/name
// and by UID, as positions in the list. It is used only while the State's
// cluster lists the very same pods (the same slice).
type podIndex struct {
	pods   []*v1.Pod
	byName map[types.NamespacedName][]int32
	byUID  map[types.UID][]int32
}

func newPodIndex(pods []*v1.Pod) *podIndex {
	x := &podIndex{pods: pods, byName: make(map[types.NamespacedName][]int32, len(pods)), byUID: make(map[types.UID][]int32, len(pods))}
	for i, p := range pods {
		k := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		x.byName[k] = append(x.byName[k], int32(i))
		if p.UID != "" {
			x.byUID[p.UID] = append(x.byUID[p.UID], int32(i))
		}
	}
	return x
}

// samePod returns the cluster's pods named namespace/name or, when uid is
// not empty, with that UID, in the cluster's order: the pods an explained
// pod stands for.
func (s *State) samePod(namespace, name string, uid types.UID) []*v1.Pod {
	x := s.index
	if x == nil || len(x.pods) != len(s.cluster.Pods) || len(x.pods) > 0 && &x.pods[0] != &s.cluster.Pods[0] {
		var out []*v1.Pod
		for _, p := range s.cluster.Pods {
			if p.Namespace == namespace && p.Name == name || uid != "" && p.UID == uid {
				out = append(out, p)
			}
		}
		return out
	}
	at := x.byName[types.NamespacedName{Namespace: namespace, Name: name}]
	if uid != "" {
		if u := x.byUID[uid]; len(u) > 0 {
			at = append(slices.Clip(at), u...)
			slices.Sort(at)
			at = slices.Compact(at)
		}
	}
	out := make([]*v1.Pod, len(at))
	for k, i := range at {
		out[k] = x.pods[i]
	}
	return out
}
