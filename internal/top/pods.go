package top

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// PendingPod is an unbound pod of the watched scheduler, with why its last
// attempt failed.
type PendingPod struct {
	Namespace     string        `json:"namespace"`
	Name          string        `json:"name"`
	SchedulerName string        `json:"schedulerName"`
	Age           time.Duration `json:"-"`
	// Reason is the PodScheduled condition's reason (Unschedulable,
	// SchedulerError, ...), empty if the pod was never attempted.
	Reason string `json:"reason,omitempty"`
	// Message is the last FailedScheduling message: kube-scheduler writes
	// the same text into the PodScheduled condition and the event.
	Message string `json:"message,omitempty"`
	// PodGroup is the Workload API PodGroup the pod names
	// (spec.schedulingGroup.podGroupName), if any.
	PodGroup string `json:"podGroup,omitempty"`
}

// Key is namespace/name.
func (p PendingPod) Key() string { return p.Namespace + "/" + p.Name }

// maxPendingPods bounds one listing (the panel shows a screenful).
const maxPendingPods = 2000

// ListPending lists the unbound Pending pods (one namespace, or all for
// ""), those of the given scheduler names only unless the list is empty,
// oldest first.
func ListPending(ctx context.Context, client kubernetes.Interface, namespace string, schedulers []string, now time.Time) ([]PendingPod, error) {
	sel := fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", ""), fields.OneTermEqualSelector("status.phase", string(v1.PodPending)))
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String(), Limit: maxPendingPods})
	if err != nil {
		return nil, fmt.Errorf("listing pending pods: %w", err)
	}
	want := map[string]bool{}
	for _, s := range schedulers {
		want[s] = true
	}
	out := make([]PendingPod, 0, len(list.Items))
	for i := range list.Items {
		p := &list.Items[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || (len(want) > 0 && !want[p.Spec.SchedulerName]) {
			continue
		}
		pp := PendingPod{Namespace: p.Namespace, Name: p.Name, SchedulerName: p.Spec.SchedulerName, Age: now.Sub(p.CreationTimestamp.Time)}
		if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
			pp.PodGroup = *g.PodGroupName
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				pp.Reason, pp.Message = c.Reason, c.Message
			}
		}
		out = append(out, pp)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Age != out[j].Age {
			return out[i].Age > out[j].Age
		}
		return out[i].Key() < out[j].Key()
	})
	return out, nil
}
