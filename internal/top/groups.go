package top

import (
	"context"
	"fmt"
	"sort"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// PendingGroup is a Workload API PodGroup (scheduling.k8s.io/v1beta1)
// with pending members: what a scheduler with GenericWorkload on queues as
// one entity and schedules in one pod-group cycle, all of its pending
// members or none.
type PendingGroup struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Policy is "gang" or "basic"; MinCount is the gang's. Both are empty
	// when the PodGroup does not exist (Missing).
	Policy   string `json:"policy,omitempty"`
	MinCount int32  `json:"minCount,omitempty"`
	// Pending counts its pending members (of the watched schedulers).
	Pending int `json:"pending"`
	// Age is the age of its oldest pending member.
	Age time.Duration `json:"-"`
	// Missing is set when the members name a PodGroup that is not there:
	// kube's queue keeps them until it appears.
	Missing bool `json:"missing,omitempty"`
	// Status, Reason and Message are its PodGroupInitiallyScheduled
	// condition as the scheduler wrote it (empty if none).
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Key is namespace/name.
func (g PendingGroup) Key() string { return g.Namespace + "/" + g.Name }

// ListPendingGroups gathers the pending pods by the PodGroup they name and
// reads those PodGroups (one namespace, or all for ""): their policy and
// the condition the scheduler wrote, oldest first. An API server that
// does not serve v1beta1 PodGroups gives no PodGroup: the groups are then
// listed as missing, as kube's queue would hold them.
func ListPendingGroups(ctx context.Context, client kubernetes.Interface, namespace string, pods []PendingPod) ([]PendingGroup, error) {
	byKey := map[string]*PendingGroup{}
	for _, p := range pods {
		if p.PodGroup == "" {
			continue
		}
		k := p.Namespace + "/" + p.PodGroup
		g := byKey[k]
		if g == nil {
			g = &PendingGroup{Namespace: p.Namespace, Name: p.PodGroup, Missing: true}
			byKey[k] = g
		}
		g.Pending++
		g.Age = max(g.Age, p.Age)
	}
	if len(byKey) == 0 {
		return nil, nil
	}
	list, err := client.SchedulingV1beta1().PodGroups(namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("listing PodGroups: %w", err)
	default:
		for i := range list.Items {
			pg := &list.Items[i]
			g := byKey[pg.Namespace+"/"+pg.Name]
			if g == nil {
				continue
			}
			g.Missing, g.Policy = false, "basic"
			if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
				g.Policy, g.MinCount = "gang", gang.MinCount
			}
			if c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); c != nil {
				g.Status, g.Reason, g.Message = string(c.Status), c.Reason, c.Message
			}
		}
	}
	out := make([]PendingGroup, 0, len(byKey))
	for _, g := range byKey {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Age != out[j].Age {
			return out[i].Age > out[j].Age
		}
		return out[i].Key() < out[j].Key()
	})
	return out, nil
}
