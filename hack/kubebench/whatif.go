package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubectl/pkg/drain"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
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
	// The drain happens to a running scheduler, as it would in a cluster:
	// its informers deliver the cordons, evictions and node deletions (so
	// its cache updates in place, as kube-scheduler's does), then the
	// replacements are scheduled.
	change := func(ctx context.Context, c *fake.Clientset, b *bench) error {
		nodesLeft, boundLeft := cl.nodes, cl.bound
		for _, o := range cl.objects {
			p, ok := o.(*v1.Pod)
			if !ok || p.Spec.NodeName == "" || !(gone[p.Namespace+"/"+p.Name] || del && drained[p.Spec.NodeName]) {
				continue
			}
			if err := c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				return err
			}
			boundLeft--
			// One at a time: the fake watchers' channels are bounded.
			for ctx.Err() == nil {
				if _, err := b.sched.Cache.GetPod(p); err != nil {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		for _, name := range nodes {
			if del {
				if err := c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					return err
				}
				nodesLeft--
				continue
			}
			n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Spec.Unschedulable = true
			if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		return b.waitChanged(ctx, nodesLeft, boundLeft, nodes, del)
	}
	queueOrder(replacements)
	if preempt {
		pr, err := runPreemptionAfter(ctx, &cluster{objects: cl.objects, nodes: cl.nodes, bound: cl.bound, pending: replacements}, cfg, percentage, change)
		if err != nil {
			return nil, err
		}
		res.Placements, res.Unschedulable, res.Evictions = pr.Placements, pr.Unschedulable, pr.Evictions
		return res, nil
	}
	client2 := fake.NewClientset(cl.objects...)
	b, factory, err := newBench(ctx, client2, cfg, percentage)
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := b.waitCache(cl); err != nil {
		return nil, err
	}
	if err := change(ctx, client2, b); err != nil {
		return nil, err
	}
	pr, err := b.run(ctx, replacements)
	if err != nil {
		return nil, err
	}
	res.Placements, res.Unschedulable, res.Evictions = pr.Placements, pr.Unschedulable, []eviction{}
	return res, nil
}

// waitChanged waits until the scheduler's cache has seen a drain: the node
// and bound pod counts, and the cordoned nodes unschedulable.
func (b *bench) waitChanged(ctx context.Context, nodes, bound int, drained []string, deleted bool) error {
	logger := ctxLogger(ctx)
	for ctx.Err() == nil {
		n, err := b.sched.Cache.PodCount()
		if err != nil {
			return err
		}
		ok := b.sched.Cache.NodeCount() == nodes && n == bound
		if ok && !deleted {
			snap := internalcache.NewEmptySnapshot()
			if err := b.sched.Cache.UpdateSnapshot(logger, snap); err != nil {
				return err
			}
			for _, name := range drained {
				ni, err := snap.NodeInfos().Get(name)
				if err != nil || !ni.Node().Spec.Unschedulable {
					ok = false
				}
			}
		}
		if ok {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ctx.Err()
}
