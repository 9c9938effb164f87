package live

import (
	"context"
	"fmt"
	"math/rand"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	policylisters "k8s.io/client-go/listers/policy/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// apiEvictor carries out preemption through the API as kube-scheduler's
// preemption executor does: the victim gets the DisruptionTarget condition
// (reason PreemptionByScheduler), then it is deleted (graceful deletion;
// its kubelet stops it). A victim already gone is not an error. The
// deletion reaches the cache and the queue through the informers, which
// requeues the preemptor.
type apiEvictor struct {
	client kubernetes.Interface
}

var (
	_ schedcore.Evictor         = apiEvictor{}
	_ schedcore.PodGroupEvictor = apiEvictor{}
)

// disruptionTarget is the condition kube sets on a victim before deleting it.
func disruptionTarget(victim, preemptor *v1.Pod) *v1.PodCondition {
	return &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: victim.Generation,
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", preemptor.Spec.SchedulerName),
	}
}

// PreemptPod implements schedcore.Evictor.
func (e apiEvictor) PreemptPod(ctx context.Context, preemptor, victim *v1.Pod, _ string) error {
	return e.preempt(ctx, victim, disruptionTarget(victim, preemptor))
}

// PreemptPodForPodGroup implements schedcore.PodGroupEvictor: as
// PreemptPod, with kube's condition message for a podgroup preemptor.
func (e apiEvictor) PreemptPodForPodGroup(ctx context.Context, _ *schedulingv1beta1.PodGroup, schedulerName string, victim *v1.Pod) error {
	cond := &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: victim.Generation,
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority %s", schedulerName, schedcore.PodGroupKeyType),
	}
	return e.preempt(ctx, victim, cond)
}

func (e apiEvictor) preempt(ctx context.Context, victim *v1.Pod, cond *v1.PodCondition) error {
	if err := patchPodStatus(ctx, e.client, victim, cond, nil); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("adding the DisruptionTarget condition to %s: %w", schedcore.PodName(victim), err)
	}
	if err := e.client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting preemption victim %s: %w", schedcore.PodName(victim), err)
	}
	return nil
}

// ClearNominatedNodeName implements schedcore.Evictor: pods whose status
// names a node get it cleared (kube skips the others).
func (e apiEvictor) ClearNominatedNodeName(ctx context.Context, pods []*v1.Pod) error {
	var errs []error
	for _, p := range pods {
		if p.Status.NominatedNodeName == "" {
			continue
		}
		if err := patchPodStatus(ctx, e.client, p, nil, &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride}); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("clearing nominated node names: %v", errs)
	}
	return nil
}

// preemptionHooks wires DefaultPreemption to the cluster: PDBs from the
// informer, evictions through the API, and kube's random scan offset.
func preemptionHooks(client kubernetes.Interface, pdbs policylisters.PodDisruptionBudgetLister) schedcore.PreemptionHooks {
	return schedcore.PreemptionHooks{
		PDBs: func() []*policyv1.PodDisruptionBudget {
			l, _ := pdbs.List(labels.Everything())
			return l
		},
		Evictor: apiEvictor{client: client},
		Offset:  func(n int32) int32 { return rand.Int31n(n) },
	}
}
