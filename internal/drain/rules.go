package drain

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
)

// What kubectl drain does with a pod of a drained node (its filters, in
// k8s.io/kubectl/pkg/drain, in their order).
type verdict int

const (
	// evict: an eviction is requested (the PodDisruptionBudgets decide).
	evict verdict = iota
	// keepDaemonSet: a DaemonSet's pod stays (as with --ignore-daemonsets).
	keepDaemonSet
	// keepMirror: a static pod's mirror stays (the kubelet owns it).
	keepMirror
	// refuseUnmanaged: a pod no controller declares; kubectl drain refuses
	// the whole node without --force.
	refuseUnmanaged
)

// kubectl drain's messages (k8s.io/kubectl/pkg/drain/filters.go).
const (
	unmanagedFatal   = "Pods that declare no controller (use --force to override)"
	unmanagedWarning = "deleting Pods that declare no controller"
)

// classify is kubectl drain's filter chain for one pod, with
// --ignore-daemonsets and --delete-emptydir-data (emptyDir data is flagged
// instead): finished pods are deleted; DaemonSet pods and mirror pods stay;
// pods without a controller are refused unless force.
func classify(p *v1.Pod, force bool) verdict {
	finished := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
	ref := metav1.GetControllerOfNoCopy(p)
	if ref != nil && isDaemonSet(ref) && !finished {
		return keepDaemonSet
	}
	if _, ok := p.Annotations[v1.MirrorPodAnnotationKey]; ok {
		return keepMirror
	}
	if ref == nil && !finished && !force {
		return refuseUnmanaged
	}
	return evict
}

func isDaemonSet(ref *metav1.OwnerReference) bool {
	apiVersion, kind := appsv1.SchemeGroupVersion.WithKind("DaemonSet").ToAPIVersionAndKind()
	return ref.Kind == kind && ref.APIVersion == apiVersion
}

// hasLocalStorage is kubectl drain's test for emptyDir data.
func hasLocalStorage(p *v1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			return true
		}
	}
	return false
}

// recreated reports whether a pod's controller makes a new pod when it is
// evicted: every controller but a DaemonSet (whose pod stays anyway).
func recreated(p *v1.Pod) bool {
	ref := metav1.GetControllerOfNoCopy(p)
	return ref != nil && !isDaemonSet(ref)
}

// budgets is the eviction subresource's view of the PodDisruptionBudgets:
// their status as the API server holds it, decremented by each eviction it
// allows (pkg/registry/core/pod/storage/eviction.go).
type budgets struct {
	pdbs []*policyv1.PodDisruptionBudget
}

func newBudgets(pdbs []*policyv1.PodDisruptionBudget) *budgets {
	b := &budgets{}
	for _, p := range pdbs {
		b.pdbs = append(b.pdbs, p.DeepCopy())
	}
	sort.SliceStable(b.pdbs, func(i, j int) bool {
		return b.pdbs[i].Namespace+"/"+b.pdbs[i].Name < b.pdbs[j].Namespace+"/"+b.pdbs[j].Name
	})
	return b
}

// Refusal is an eviction the API server refuses: its HTTP code, the
// error's message and its DisruptionBudget cause (the API server's words),
// and the budget that blocks it.
type Refusal struct {
	Code    int
	Message string
	Cause   string
	Budget  string
}

// maxDisruptedPods is the eviction subresource's MaxDisruptedPodSize.
const maxDisruptedPods = 2000

// evict asks for an eviction of p as the API server would decide it now: nil
// means the pod is deleted (and the budget decremented when it counted).
func (b *budgets) evict(p *v1.Pod) *Refusal {
	// canIgnorePDB: terminal, pending and terminating pods go at once.
	if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodPending || p.DeletionTimestamp != nil {
		return nil
	}
	var matching []*policyv1.PodDisruptionBudget
	for _, pdb := range b.pdbs {
		if pdb.Namespace != p.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		matching = append(matching, pdb)
	}
	switch len(matching) {
	case 0:
		return nil
	case 1:
	default:
		var names []string
		for _, m := range matching {
			names = append(names, m.Name)
		}
		return &Refusal{Code: 500, Budget: strings.Join(names, ", "),
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}
	}
	pdb := matching[0]
	ref := pdb.Namespace + "/" + pdb.Name
	if !podReady(p) {
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			return nil
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return nil
		}
	}
	const tooMany = "Cannot evict pod as it would violate the pod's disruption budget."
	forbidden := func(why string) string {
		return fmt.Sprintf("poddisruptionbudgets.policy %q is forbidden: %s", pdb.Name, why)
	}
	st := &pdb.Status
	switch {
	case st.ObservedGeneration < pdb.Generation:
		return &Refusal{Code: 429, Budget: ref, Message: tooMany,
			Cause: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name)}
	case st.DisruptionsAllowed < 0:
		return &Refusal{Code: 403, Budget: ref, Message: forbidden("pdb disruptions allowed is negative"),
			Cause: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: pdb disruptions allowed is negative", pdb.Name)}
	case len(st.DisruptedPods) > maxDisruptedPods:
		return &Refusal{Code: 403, Budget: ref, Message: forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller"),
			Cause: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller", pdb.Name)}
	case st.DisruptionsAllowed == 0:
		return &Refusal{Code: 429, Budget: ref, Message: tooMany, Cause: zeroBudgetCause(pdb)}
	}
	st.DisruptionsAllowed--
	if st.DisruptionsAllowed == 0 {
		pdbhelper.UpdateDisruptionAllowedCondition(pdb)
	}
	if st.DisruptedPods == nil {
		st.DisruptedPods = map[string]metav1.Time{}
	}
	st.DisruptedPods[p.Name] = metav1.Time{}
	return nil
}

// zeroBudgetCause is the eviction subresource's cause for a budget with no
// disruption left.
func zeroBudgetCause(pdb *policyv1.PodDisruptionBudget) string {
	c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	switch {
	case c != nil && c.Status == metav1.ConditionFalse && c.Message != "" && c.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, c.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case c != nil && c.Status == metav1.ConditionFalse && c.Message != "":
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, c.Reason, c.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

// podReady is the API server's IsPodReady: the Ready condition is True.
func podReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
