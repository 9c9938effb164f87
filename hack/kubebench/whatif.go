package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubectl/pkg/drain"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// The -capacity and -drain modes are the references of `kubectl sched
// capacity` and `kubectl sched drain`, with kube's own code wherever kube
// has it: the real framework places the copies (cluster-capacity's
// procedure: one after another, each assumed and reserved before the next,
// until the first that fits nowhere), and kubectl's drain package
// (k8s.io/kubectl/pkg/drain, GetPodsForDeletion with --ignore-daemonsets
// --delete-emptydir-data [--force]) says which pods a drain deletes.
// PodDisruptionBudgets are not evaluated here (the fake clientset has no
// eviction subresource): the end-to-end tests compare those decisions with
// a real API server.

type capacityResult struct {
	Count      int            `json:"count"`
	Nodes      map[string]int `json:"nodes"`
	Placements []placement    `json:"placements"`
	StoppedBy  string         `json:"stoppedBy"`
}

// withoutPending returns the snapshot without its pending pods (they are
// not part of either question).
func withoutPending(cl *cluster) *cluster {
	out := &cluster{nodes: cl.nodes, bound: cl.bound}
	for _, o := range cl.objects {
		if p, ok := o.(*v1.Pod); ok && p.Spec.NodeName == "" {
			continue
		}
		out.objects = append(out.objects, o)
	}
	return out
}

// templateNodes adds n copies of the template node, named as `kubectl
// sched capacity` names them ("<name>-<i>", hostname label set).
func templateNodes(cl *cluster, path string, n int) error {
	t, err := loadSnapshot(path)
	if err != nil {
		return err
	}
	var tmpl *v1.Node
	for _, o := range t.objects {
		if node, ok := o.(*v1.Node); ok {
			tmpl = node
		}
	}
	if tmpl == nil {
		return fmt.Errorf("%s: no Node", path)
	}
	for i := 1; i <= n; i++ {
		node := tmpl.DeepCopy()
		node.Name = fmt.Sprintf("%s-%d", tmpl.Name, i)
		node.UID = types.UID("template-" + node.Name)
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[v1.LabelHostname] = node.Name
		if len(node.Status.Conditions) == 0 {
			node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
		}
		cl.objects = append(cl.objects, node)
		cl.nodes++
	}
	return nil
}

// runCapacity places copies of the spec pod (named "<name>-capacity-<i>")
// until one fits nowhere or max are placed.
func runCapacity(ctx context.Context, cl *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32, specPath string, max int) (*capacityResult, error) {
	spec, err := loadSnapshot(specPath)
	if err != nil {
		return nil, err
	}
	if len(spec.pending) != 1 {
		return nil, fmt.Errorf("%s: want one Pod, found %d pending pods", specPath, len(spec.pending))
	}
	tmpl := spec.pending[0]
	b, err := startBench(ctx, cl, cfg, percentage)
	if err != nil {
		return nil, err
	}
	f, ok := b.sched.Profiles[tmpl.Spec.SchedulerName]
	if !ok {
		return nil, fmt.Errorf("no profile %q", tmpl.Spec.SchedulerName)
	}
	res := &capacityResult{Nodes: map[string]int{}, Placements: []placement{}}
	logger := ctxLogger(ctx)
	for i := 1; max <= 0 || res.Count < max; i++ {
		pod := tmpl.DeepCopy()
		pod.Name = fmt.Sprintf("%s-capacity-%d", tmpl.Name, i)
		pod.UID = types.UID("capacity-" + pod.Namespace + "-" + pod.Name)
		if err := b.sched.Cache.UpdateSnapshot(logger, b.snapshot); err != nil {
			return nil, err
		}
		node, fitErr, err := b.commit(ctx, f, pod)
		if err != nil {
			return nil, err
		}
		if fitErr != nil {
			res.StoppedBy = fitErr.Error()
			break
		}
		res.Count++
		res.Nodes[node]++
		res.Placements = append(res.Placements, placement{Pod: pod.Namespace + "/" + pod.Name, Node: node})
	}
	return res, nil
}

// startBench builds a kube-scheduler on a fake clientset holding the
// cluster's objects and waits for its cache.
func startBench(ctx context.Context, cl *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32) (*bench, error) {
	client := fake.NewClientset(cl.objects...)
	b, factory, err := newBench(ctx, client, cfg, percentage)
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := b.waitCache(cl); err != nil {
		return nil, err
	}
	return b, nil
}

type drainResult struct {
	// Evicted are the pods kubectl drain deletes, in its order; Refused
	// the nodes it refuses, with its error.
	Evicted []string          `json:"evicted"`
	Refused map[string]string `json:"refused"`
	// Replaced are the evicted pods whose controller recreates them.
	Replaced []string `json:"replaced"`
	// Placements and Unschedulable are the replacements' fate, as in the
	// placement or the preemption mode; Evictions the preemption victims.
	Placements    []placement `json:"placements"`
	Unschedulable []failure   `json:"unschedulable"`
	Evictions     []eviction  `json:"evictions"`
}

// runDrain drains the nodes (cordoned, or deleted) with kubectl's drain
// helper, recreates the evicted pods that have a controller other than a
// DaemonSet (same pod, pending, new UID), and places them: in the placement
// mode's loop, or in kube-scheduler's own loop with preemption.
func runDrain(ctx context.Context, cl *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32, nodes []string, del, force, preempt bool) (*drainResult, error) {
	client := fake.NewClientset(cl.objects...)
	// The fake clientset ignores field selectors; kubectl lists a node's
	// pods with spec.nodeName=NODE.
	client.PrependReactor("list", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		la := a.(clienttesting.ListAction)
		fs := la.GetListRestrictions().Fields
		if fs == nil || fs.Empty() {
			return false, nil, nil
		}
		obj, err := client.Tracker().List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), la.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list := obj.(*v1.PodList)
		out := &v1.PodList{}
		for _, p := range list.Items {
			if fs.Matches(fields.Set{"spec.nodeName": p.Spec.NodeName, "metadata.name": p.Name, "metadata.namespace": p.Namespace}) {
				out.Items = append(out.Items, p)
			}
		}
		return true, out, nil
	})
	h := &drain.Helper{Ctx: ctx, Client: client, Force: force, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true,
		GracePeriodSeconds: -1, Out: io.Discard, ErrOut: io.Discard}
	res := &drainResult{Evicted: []string{}, Refused: map[string]string{}, Replaced: []string{}}
	drained := map[string]bool{}
	gone := map[string]bool{}
	var replacements []*v1.Pod
	for _, node := range nodes {
		drained[node] = true
		list, errs := h.GetPodsForDeletion(node)
		if len(errs) > 0 {
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			res.Refused[node] = strings.Join(msgs, "; ")
			continue
		}
		for _, p := range list.Pods() {
			k := p.Namespace + "/" + p.Name
			res.Evicted = append(res.Evicted, k)
			gone[k] = true
			ref := metav1.GetControllerOf(&p)
			if ref == nil || ref.Kind == "DaemonSet" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				continue
			}
			r := &v1.Pod{ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
			r.UID = types.UID("drain-" + p.Namespace + "-" + p.Name)
			r.ResourceVersion, r.DeletionTimestamp = "", nil
			r.Spec.NodeName = ""
			r.Status = v1.PodStatus{Phase: v1.PodPending}
			replacements = append(replacements, r)
			res.Replaced = append(res.Replaced, k)
		}
	}
	after := &cluster{pending: replacements}
	for _, o := range cl.objects {
		switch x := o.(type) {
		case *v1.Node:
			if drained[x.Name] {
				if del {
					continue
				}
				x = x.DeepCopy()
				x.Spec.Unschedulable = true
			}
			after.objects = append(after.objects, x)
			after.nodes++
			continue
		case *v1.Pod:
			if gone[x.Namespace+"/"+x.Name] || del && drained[x.Spec.NodeName] {
				continue
			}
			after.bound++
		}
		after.objects = append(after.objects, o)
	}
	if preempt {
		pr, err := runPreemption(ctx, after, cfg, percentage)
		if err != nil {
			return nil, err
		}
		res.Placements, res.Unschedulable, res.Evictions = pr.Placements, pr.Unschedulable, pr.Evictions
		return res, nil
	}
	b, err := startBench(ctx, after, cfg, percentage)
	if err != nil {
		return nil, err
	}
	queueOrder(after.pending)
	pr, err := b.run(ctx, after.pending)
	if err != nil {
		return nil, err
	}
	res.Placements, res.Unschedulable, res.Evictions = pr.Placements, pr.Unschedulable, []eviction{}
	return res, nil
}
