package live

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1beta1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/go-logr/logr"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// crdPodGroups is scheduler-plugins' PodGroup resource.
var crdPodGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}

// liveObjects serves schedcore.ObjectLister from informers: pods from the
// pod informer, kube's Workload API (scheduling.k8s.io/v1beta1 PodGroups
// and Workloads) from typed informers and scheduler-plugins' PodGroup CRD
// from a dynamic one, each only when the API serves it.
type liveObjects struct {
	pods      corelisters.PodLister
	native    schedulinglisters.PodGroupLister
	workloads schedulinglisters.WorkloadLister
	crd       cache.GenericLister
}

func (o *liveObjects) Pods(namespace string) []*v1.Pod {
	ps, _ := o.pods.Pods(namespace).List(labels.Everything())
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

func (o *liveObjects) Get(apiVersion, kind, namespace, name string) (runtime.Object, bool) {
	if kind == "Workload" && apiVersion == schedcore.NativePodGroupAPIVersion && o.workloads != nil {
		w, err := o.workloads.Workloads(namespace).Get(name)
		return w, err == nil
	}
	if kind != schedcore.PodGroupKind {
		return nil, false
	}
	switch {
	case apiVersion == schedcore.NativePodGroupAPIVersion && o.native != nil:
		pg, err := o.native.PodGroups(namespace).Get(name)
		return pg, err == nil
	case apiVersion == schedcore.CRDPodGroupAPIVersion && o.crd != nil:
		obj, err := o.crd.ByNamespace(namespace).Get(name)
		return obj, err == nil
	}
	return nil, false
}

// gangsEnabled reports whether a profile runs a group plugin
// (Coscheduling).
func gangsEnabled(profiles map[string]*schedruntime.Framework) bool {
	for _, fw := range profiles {
		if fw.HasPodGroupPlugins() {
			return true
		}
	}
	return false
}

// serves reports whether the API server has the resource.
func serves(dc discovery.DiscoveryInterface, gvr schema.GroupVersionResource) (bool, error) {
	res, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	for _, r := range res.APIResources {
		if r.Name == gvr.Resource {
			return true, nil
		}
	}
	return false, nil
}

// setUpPodGroups sets, for the PodGroup APIs the server has, the object
// lister's PodGroup listers and informers whose changes requeue pods (the
// group plugins' PodGroup events). It does nothing unless a profile runs
// a group plugin or GenericWorkload is on; with the gate on, kube's
// v1beta1 PodGroups (and Workloads) are watched whatever the profiles,
// and their PodGroups feed the cache's pod group states, as kube's
// informer handlers do (eventhandlers.go addPodGroup and after). The
// scheduler-plugins CRD is watched only for a group plugin. Absent APIs
// are tolerated: their groups are then unknown.
func (d *driver) setUpPodGroups(ctx context.Context) error {
	gangs, generic := gangsEnabled(d.profiles.ByName), d.eng.Options.Features.GenericWorkload
	if !gangs && !generic {
		return nil
	}
	d.handlers.gangs = gangs
	objs := d.objects
	requeue := func(res schedcore.EventResource) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				d.queue.MoveAllToActiveOrBackoffQueue(d.logger, schedcore.ClusterEvent{Resource: res, ActionType: schedcore.Add}, nil, obj, nil)
			},
			UpdateFunc: func(oldObj, newObj any) {
				d.queue.MoveAllToActiveOrBackoffQueue(d.logger, schedcore.ClusterEvent{Resource: res, ActionType: schedcore.Update}, oldObj, newObj, nil)
			},
		}
	}
	dc := d.client.Discovery()
	native := schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups")
	if ok, err := serves(dc, native); err != nil {
		d.logger.Error(err, "Discovering PodGroups; native gangs are not scheduled as such", "resource", native)
	} else if ok {
		inf := d.factory.Scheduling().V1beta1().PodGroups()
		objs.native = inf.Lister()
		h := requeue(schedcore.PodGroup)
		if generic {
			h = d.handlers.podGroupFuncs()
		}
		reg, err := inf.Informer().AddEventHandler(h)
		if err != nil {
			return fmt.Errorf("registering PodGroup handler: %w", err)
		}
		d.regs = append(d.regs, reg)
	}
	// Workloads are read (a PodGroup's workloadRef), not watched for
	// requeueing: kube-scheduler v1.37 registers no Workload event.
	workloads := schedulingv1beta1.SchemeGroupVersion.WithResource("workloads")
	if ok, err := serves(dc, workloads); err != nil {
		d.logger.Error(err, "Discovering Workloads", "resource", workloads)
	} else if ok {
		objs.workloads = d.factory.Scheduling().V1beta1().Workloads().Lister()
	}
	if !gangs {
		return nil
	}
	if ok, err := serves(dc, crdPodGroups); err != nil {
		d.logger.Error(err, "Discovering PodGroups; scheduler-plugins gangs are not scheduled as such", "resource", crdPodGroups)
	} else if ok {
		dyn, err := dynamic.NewForConfig(d.o.RESTConfig)
		if err != nil {
			return fmt.Errorf("creating dynamic client: %w", err)
		}
		d.dynFactory = dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
		inf := d.dynFactory.ForResource(crdPodGroups)
		objs.crd = inf.Lister()
		reg, err := inf.Informer().AddEventHandler(requeue(schedcore.PodGroupCRD))
		if err != nil {
			return fmt.Errorf("registering PodGroup handler: %w", err)
		}
		d.regs = append(d.regs, reg)
	}
	_ = ctx
	return nil
}

// podGroupFuncs handles v1beta1 PodGroup events with GenericWorkload on,
// as kube's addPodGroup/updatePodGroup/deletePodGroup: the cache first,
// the queue's observed PodGroups, then the requeue.
func (h *handlers) podGroupFuncs() cache.ResourceEventHandlerFuncs {
	event := func(a schedcore.ActionType) schedcore.ClusterEvent {
		return schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: a}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			pg, ok := obj.(*schedulingv1beta1.PodGroup)
			if !ok {
				return
			}
			defer h.since(event(schedcore.Add), time.Now())
			h.cache.AddPodGroup(pg)
			h.queue.AddPodGroup(h.logger, pg)
			h.queue.MoveAllToActiveOrBackoffQueue(h.logger, event(schedcore.Add), nil, pg, nil)
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldPG, ok1 := oldObj.(*schedulingv1beta1.PodGroup)
			newPG, ok2 := newObj.(*schedulingv1beta1.PodGroup)
			if !ok1 || !ok2 || oldPG.ResourceVersion == newPG.ResourceVersion {
				return
			}
			defer h.since(event(schedcore.Update), time.Now())
			h.cache.UpdatePodGroup(oldPG, newPG)
			h.queue.UpdatePodGroup(h.logger, newPG)
			h.queue.MoveAllToActiveOrBackoffQueue(h.logger, event(schedcore.Update), oldPG, newPG, nil)
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			pg, ok := obj.(*schedulingv1beta1.PodGroup)
			if !ok {
				return
			}
			defer h.since(event(schedcore.Delete), time.Now())
			h.cache.RemovePodGroup(pg)
			h.queue.DeletePodGroup(h.logger, pg)
			h.queue.MoveAllToActiveOrBackoffQueue(h.logger, event(schedcore.Delete), pg, nil, nil)
		},
	}
}

// podGroupStatusPatcher writes the status a pod-group cycle set (its
// PodGroupInitiallyScheduled condition) as kube's util.PatchPodGroupStatus:
// a strategic merge patch of the status subresource from the cycle's copy
// to the new status (none when empty); the update comes back through the
// PodGroup informer.
func podGroupStatusPatcher(client kubernetes.Interface, logger logr.Logger) func(context.Context, *schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroupStatus) {
	return func(ctx context.Context, pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus) {
		fail := func(err error) { logger.Error(err, "Failed to update PodGroup status", "podGroup", klog.KObj(pg)) }
		oldData, err := json.Marshal(schedulingv1beta1.PodGroup{Status: pg.Status})
		if err != nil {
			fail(err)
			return
		}
		newData, err := json.Marshal(schedulingv1beta1.PodGroup{Status: *status})
		if err != nil {
			fail(err)
			return
		}
		patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &schedulingv1beta1.PodGroup{})
		if err != nil {
			fail(fmt.Errorf("failed to create merge patch for podgroup %q/%q: %w", pg.Namespace, pg.Name, err))
			return
		}
		if string(patch) == "{}" {
			return
		}
		if _, err := client.SchedulingV1beta1().PodGroups(pg.Namespace).Patch(ctx, pg.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			fail(err)
		}
	}
}
