package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// DRA in the placement run: a placement commits its claims' allocation
// and reservation before the next pod, as kube-scheduler's PreBind writes
// them (DynamicResources' PreBind, run through the framework for pods
// with ResourceClaims: the claims are written through the fake clientset
// and put in the DRA manager's assume cache, which the next pod's
// PreFilter reads). Pods with claims must not also have volumes to bind
// (VolumeBinding's PreBind would wait for a PV controller).

// commitClaims runs the PreBind plugins for a pod with ResourceClaims (or
// DRA-backed extended resources), after its Reserve.
func (b *bench) commitClaims(ctx context.Context, f framework.Framework, state fwk.CycleState, pod *v1.Pod, node string) error {
	if !b.draPods {
		return nil
	}
	if st := f.RunPreBindPlugins(ctx, state, pod, node); !st.IsSuccess() {
		return fmt.Errorf("prebind on %s: %w", node, st.AsError())
	}
	if os.Getenv("KUBEBENCH_DEBUG") != "" {
		for _, pc := range pod.Spec.ResourceClaims {
			if pc.ResourceClaimName != nil {
				c, err := f.SharedDRAManager().ResourceClaims().Get(pod.Namespace, *pc.ResourceClaimName)
				fmt.Fprintf(os.Stderr, "DEBUG %s claim %s err=%v alloc=%v pending=%v rv=%s\n", pod.Name, *pc.ResourceClaimName, err, c != nil && c.Status.Allocation != nil, c != nil && f.SharedDRAManager().ResourceClaims().GetPendingAllocation(c.UID) != nil, c.ResourceVersion)
			}
		}
	}
	// The claim informer delivers the write later anyway; waiting for it
	// keeps the next PreFilter's view exact (the assume cache holds the
	// newer object meanwhile).
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b.claimsSynced(pod) {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// claimsSynced reports whether the informer has the pod's claims reserved
// for it.
func (b *bench) claimsSynced(pod *v1.Pod) bool {
	lister := b.factory.Resource().V1().ResourceClaims().Lister()
	for _, st := range pod.Status.ResourceClaimStatuses {
		if st.ResourceClaimName == nil {
			continue
		}
		c, err := lister.ResourceClaims(pod.Namespace).Get(*st.ResourceClaimName)
		if err != nil || !reservedFor(c, pod) {
			return false
		}
	}
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimName == nil {
			continue
		}
		c, err := lister.ResourceClaims(pod.Namespace).Get(*pc.ResourceClaimName)
		if err != nil || !reservedFor(c, pod) {
			return false
		}
	}
	return true
}

func reservedFor(c *resourceapi.ResourceClaim, pod *v1.Pod) bool {
	for _, r := range c.Status.ReservedFor {
		if r.UID == pod.UID {
			return true
		}
	}
	return false
}

// simulateDeviceDrivers makes the fake API server act as the DRA drivers
// would for devices with binding conditions: when a claim's status is
// written with such an allocation, the conditions are set true at once,
// so that PreBind's wait ends immediately (the dry-run's simulated driver
// does the same).
func simulateDeviceDrivers(client *fake.Clientset) {
	// The API server names a claim from its generateName and gives every
	// object a resourceVersion; the fake clientset does neither (the
	// scheduler creates the claims of DRA-backed extended resources).
	var created atomic.Int64
	client.PrependReactor("create", "resourceclaims", func(action k8stesting.Action) (bool, runtime.Object, error) {
		c, ok := action.(k8stesting.CreateAction).GetObject().(*resourceapi.ResourceClaim)
		if !ok {
			return false, nil, nil
		}
		n := created.Add(1)
		if c.Name == "" && c.GenerateName != "" {
			c.Name = fmt.Sprintf("%s%05d", c.GenerateName, n)
		}
		if c.UID == "" {
			c.UID = types.UID(fmt.Sprintf("kubebench-claim-%d", n))
		}
		if c.ResourceVersion == "" {
			c.ResourceVersion = "1"
		}
		return false, nil, nil
	})
	client.PrependReactor("update", "resourceclaims", func(action k8stesting.Action) (bool, runtime.Object, error) {
		u, ok := action.(k8stesting.UpdateAction)
		if !ok || u.GetSubresource() != "status" {
			return false, nil, nil
		}
		c, ok := u.GetObject().(*resourceapi.ResourceClaim)
		if !ok || c.Status.Allocation == nil {
			return false, nil, nil
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if len(r.BindingConditions) == 0 {
				continue
			}
			idx := -1
			for i, d := range c.Status.Devices {
				if d.Driver == r.Driver && d.Pool == r.Pool && d.Device == r.Device {
					idx = i
				}
			}
			if idx < 0 {
				c.Status.Devices = append(c.Status.Devices, resourceapi.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: r.Device})
				idx = len(c.Status.Devices) - 1
			}
			for _, cond := range r.BindingConditions {
				found := false
				for _, x := range c.Status.Devices[idx].Conditions {
					if x.Type == cond {
						found = true
					}
				}
				if !found {
					c.Status.Devices[idx].Conditions = append(c.Status.Devices[idx].Conditions, metav1.Condition{Type: cond, Status: metav1.ConditionTrue, Reason: "DryRun", Message: "set by the dry-run's simulated driver", LastTransitionTime: metav1.Now()})
				}
			}
		}
		return false, nil, nil
	})
}

// runPreEnqueuePlugins runs the profile's PreEnqueue plugins in order, as
// kube's queue does, and returns the first failure with the plugin's name.
func runPreEnqueuePlugins(ctx context.Context, f framework.Framework, pod *v1.Pod) *fwk.Status {
	for _, pl := range f.PreEnqueuePlugins() {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			return st.WithPlugin(pl.Name())
		}
	}
	return nil
}
