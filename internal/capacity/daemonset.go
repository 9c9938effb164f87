package capacity

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
)

// daemonSet places one copy of a DaemonSet's pod on each node the
// DaemonSet controller would create one for (the template's node name,
// node selector and required node affinity match, every NoSchedule and
// NoExecute taint tolerated with the tolerations every daemon pod gets),
// in node name order, each pinned to its node as the controller pins it.
// Nodes where a pod of the DaemonSet already runs are skipped. The count is
// the copies placed; the others are listed with the scheduler's message.
func (c *counter) daemonSet(ctx context.Context, res *report.CapacitySpec) error {
	ds := c.spec.DaemonSet
	tmpl := c.spec.Pod
	tolerations := daemonTolerations(tmpl.Spec)
	required := nodeaffinity.NewRequiredNodeAffinity(tmpl.Spec.NodeSelector, tmpl.Spec.Affinity)
	running := map[string]bool{}
	for _, p := range c.r.base.Pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.Kind == KindDaemonSet && ref.Name == ds.Name && p.Namespace == ds.Namespace && p.Spec.NodeName != "" {
			running[p.Spec.NodeName] = true
		}
	}
	var nodes []*v1.Node
	for _, ni := range c.sim.Nodes() {
		nodes = append(nodes, ni.Node())
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		if tmpl.Spec.NodeName != "" && tmpl.Spec.NodeName != n.Name || running[n.Name] {
			continue
		}
		if ok, _ := required.Match(n); !ok {
			continue
		}
		if _, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, tolerations, func(t *v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}, false); untolerated {
			continue
		}
		p := c.newPod()
		p.Spec.Tolerations = tolerations
		p.Spec.Affinity = pinnedAffinity(p.Spec.Affinity, n.Name)
		placed, failed, err := c.sim.Place(ctx, []*v1.Pod{p})
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			res.NotPlaced = append(res.NotPlaced, report.NodeMessage{Node: n.Name, Message: failed[0].Message})
			continue
		}
		res.Nodes[placed[0].Node]++
		res.Count++
		c.progress(res.Count, 0)
	}
	res.LimitedBy = report.LimitedByNodes
	return nil
}

// daemonTolerations are the template's tolerations plus the ones the
// DaemonSet controller adds to every daemon pod
// (AddOrUpdateDaemonPodTolerations).
func daemonTolerations(spec v1.PodSpec) []v1.Toleration {
	out := append([]v1.Toleration(nil), spec.Tolerations...)
	add := func(key string, effect v1.TaintEffect) {
		t := v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect}
		for _, e := range out {
			if e.MatchToleration(&t) {
				return
			}
		}
		out = append(out, t)
	}
	add(v1.TaintNodeNotReady, v1.TaintEffectNoExecute)
	add(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute)
	add(v1.TaintNodeDiskPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeMemoryPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodePIDPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule)
	}
	return out
}

// pinnedAffinity is the DaemonSet controller's
// ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity
// becomes "metadata.name In [node]"; preferences stay.
func pinnedAffinity(a *v1.Affinity, node string) *v1.Affinity {
	sel := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
		{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}
	if a == nil {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
	}
	a = a.DeepCopy()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	return a
}
