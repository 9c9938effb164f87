package live

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// apiClaimWriter makes DynamicResources' writes through the API server, as
// kube-scheduler does: claims are updated (finalizer) and their status
// updated (allocation, reservedFor) with the resourceVersion the plugin
// read, so that a concurrent change is a conflict the plugin retries with
// a fresh claim; a reservation is removed with a strategic merge patch
// that needs no fresh claim; the pod's extendedResourceClaimStatus is
// patched.
type apiClaimWriter struct{ client kubernetes.Interface }

var _ schedcore.ResourceClaimWriter = apiClaimWriter{}

func (w apiClaimWriter) GetClaim(ctx context.Context, namespace, name string) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (w apiClaimWriter) UpdateClaim(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(c.Namespace).Update(ctx, c, metav1.UpdateOptions{})
}

func (w apiClaimWriter) UpdateClaimStatus(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
}

func (w apiClaimWriter) RemoveClaimReservation(ctx context.Context, c *resourceapi.ResourceClaim, consumer types.UID) error {
	patch := fmt.Sprintf(`{"metadata": {"uid": %q}, "status": { "reservedFor": [ {"$patch": "delete", "uid": %q} ] }}`, c.UID, consumer)
	_, err := w.client.ResourceV1().ResourceClaims(c.Namespace).Patch(ctx, c.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	return err
}

func (w apiClaimWriter) CreateClaim(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(c.Namespace).Create(ctx, c, metav1.CreateOptions{})
}

func (w apiClaimWriter) DeleteClaim(ctx context.Context, c *resourceapi.ResourceClaim) error {
	return w.client.ResourceV1().ResourceClaims(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{})
}

func (w apiClaimWriter) SetPodExtendedResourceClaimStatus(ctx context.Context, pod *v1.Pod, st *v1.PodExtendedResourceClaimStatus) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"extendedResourceClaimStatus": st}})
	if err != nil {
		return err
	}
	_, err = w.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// servesDRA reports whether the API server serves resource.k8s.io/v1 (the
// DRA informers would never sync otherwise).
func servesDRA(client kubernetes.Interface) bool {
	_, err := client.Discovery().ServerResourcesForGroupVersion(resourceapi.SchemeGroupVersion.String())
	return err == nil
}

// addDRAHandlers feeds the DRA manager from informers on DeviceClasses,
// ResourceSlices, DeviceTaintRules and ResourceClaims, and sends the
// matching events to the queue, as kube-scheduler's handlers do: a
// DeviceTaintRule change reaches pods as a ResourceSlice update (kube's
// tracker publishes the patched slices).
func (d *driver) addDRAHandlers() error {
	f := d.factory.Resource().V1()
	h := d.handlers
	m := d.eng.DRA
	type reg struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}
	regs := []reg{
		{f.DeviceClasses().Informer(), h.resourceFuncs(schedcore.DeviceClass, func(obj any, deleted bool) {
			if c, ok := obj.(*resourceapi.DeviceClass); ok {
				if deleted {
					m.DeleteClass(c)
				} else {
					m.AddClass(c)
				}
			}
		})},
		{f.ResourceSlices().Informer(), h.resourceFuncs(schedcore.ResourceSlice, func(obj any, deleted bool) {
			if s, ok := obj.(*resourceapi.ResourceSlice); ok {
				if deleted {
					m.DeleteSlice(s)
				} else {
					m.AddSlice(s)
				}
			}
		})},
		{f.DeviceTaintRules().Informer(), h.taintRuleFuncs(m)},
		{f.ResourceClaims().Informer(), h.resourceFuncs(schedcore.ResourceClaim, func(obj any, deleted bool) {
			if c, ok := obj.(*resourceapi.ResourceClaim); ok {
				if deleted {
					m.DeleteClaim(c)
				} else {
					m.AddClaim(c)
				}
			}
		})},
	}
	for _, r := range regs {
		x, err := r.inf.AddEventHandler(r.h)
		if err != nil {
			return fmt.Errorf("registering event handler: %w", err)
		}
		d.regs = append(d.regs, x)
	}
	return nil
}

// taintRuleFuncs apply DeviceTaintRules to the manager; pods learn of them
// as ResourceSlice updates.
func (h *handlers) taintRuleFuncs(m *schedcore.DRAManager) cache.ResourceEventHandlerFuncs {
	upd := schedcore.ClusterEvent{Resource: schedcore.ResourceSlice, ActionType: schedcore.Update}
	apply := func(obj any, deleted bool) {
		r, ok := unwrap(obj).(*resourceapi.DeviceTaintRule)
		if !ok {
			return
		}
		if deleted {
			m.DeleteTaintRule(r)
		} else {
			m.AddTaintRule(r)
		}
		h.queue.MoveAllToActiveOrBackoffQueue(h.logger, upd, nil, nil, nil)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { apply(obj, false) },
		UpdateFunc: func(_, obj any) { apply(obj, false) },
		DeleteFunc: func(obj any) { apply(obj, true) },
	}
}
