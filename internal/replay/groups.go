package replay

import (
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// GroupResult is a Workload API PodGroup at the end of a replay.
type GroupResult struct {
	// PodGroup is "namespace/name"; Policy "gang" or "basic"; MinCount
	// the gang's.
	PodGroup string `json:"podGroup"`
	Policy   string `json:"policy"`
	MinCount int32  `json:"minCount,omitempty"`
	// Members counts the trace's pods that name it; Placed those placed
	// during the replay, Pending those pending at the end.
	Members int `json:"members"`
	Placed  int `json:"placed"`
	Pending int `json:"pending"`
	// Scheduled is true when its PodGroupInitiallyScheduled condition is
	// True at the end; FirstPlaced is when a member was first placed (a
	// gang's quorum is bound at one instant).
	Scheduled   bool       `json:"scheduled"`
	FirstPlaced *time.Time `json:"firstPlaced,omitempty"`
	// Condition is PodGroupInitiallyScheduled as the pod-group cycles
	// left it (kube's reason and message), absent if none wrote it.
	Condition *GroupCondition `json:"condition,omitempty"`
}

// GroupCondition is a PodGroup's PodGroupInitiallyScheduled condition.
type GroupCondition struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// podGroupResults sums up each PodGroup of the cluster at the end: its
// members in the trace and what became of them.
func podGroupResults(tr *Trace, groups []*schedulingv1beta1.PodGroup, res *Result) []GroupResult {
	if len(groups) == 0 {
		return nil
	}
	pending := map[string]bool{}
	for _, p := range res.Pending {
		pending[p.Pod] = true
	}
	first := map[string]time.Time{}
	for _, e := range res.Events {
		if e.Type == EventPlaced {
			if _, ok := first[e.Pod]; !ok {
				first[e.Pod] = e.Time
			}
		}
	}
	out := make([]GroupResult, 0, len(groups))
	at := map[string]int{}
	for _, pg := range groups {
		g := GroupResult{PodGroup: pg.Namespace + "/" + pg.Name, Policy: "basic"}
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			g.Policy, g.MinCount = "gang", gang.MinCount
		}
		if c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); c != nil {
			g.Condition = &GroupCondition{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
			g.Scheduled = c.Status == metav1.ConditionTrue
		}
		at[g.PodGroup] = len(out)
		out = append(out, g)
	}
	for _, p := range tr.Pods {
		name, ok := schedcore.PodGroupNameOf(p.Pod)
		if !ok {
			continue
		}
		i, ok := at[p.Pod.Namespace+"/"+name]
		if !ok {
			continue
		}
		g, pod := &out[i], schedcore.PodName(p.Pod)
		g.Members++
		if t, ok := first[pod]; ok {
			g.Placed++
			if g.FirstPlaced == nil || t.Before(*g.FirstPlaced) {
				g.FirstPlaced = &t
			}
		}
		if pending[pod] {
			g.Pending++
		}
	}
	return out
}
