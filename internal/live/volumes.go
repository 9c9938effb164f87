package live

import (
	"context"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	annBindCompleted = "pv.kubernetes.io/bind-completed"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
)

// apiVolumeBinder is VolumeBinding's PreBind against the API server, as
// kube's BindPodVolumes: it writes the PVs bound to their claims and the
// claims annotated with the selected node, then polls the informers every
// second until the PV controller (or the external provisioner) has bound
// every claim, or the context (bindTimeoutSeconds) ends. A PV whose claimRef
// was reset or a claim whose selected node was dropped (provisioning
// failed) is an error, so the pod is retried.
type apiVolumeBinder struct {
	client kubernetes.Interface
	pvs    corelisters.PersistentVolumeLister
	pvcs   corelisters.PersistentVolumeClaimLister
}

var _ schedcore.VolumeBinder = apiVolumeBinder{}

// BindPodVolumes implements schedcore.VolumeBinder.
func (b apiVolumeBinder) BindPodVolumes(ctx context.Context, pod *v1.Pod, pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) error {
	written := make([]*v1.PersistentVolume, 0, len(pvs))
	for _, pv := range pvs {
		n, err := b.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		written = append(written, n)
	}
	claims := make([]*v1.PersistentVolumeClaim, 0, len(pvcs))
	for _, pvc := range pvcs {
		n, err := b.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		claims = append(claims, n)
	}
	node := pod.Spec.NodeName
	err := wait.PollUntilContextCancel(ctx, time.Second, false, func(context.Context) (bool, error) {
		return b.checkBindings(node, written, claims)
	})
	if err != nil {
		return fmt.Errorf("binding volumes: %w", err)
	}
	return nil
}

func (b apiVolumeBinder) checkBindings(node string, pvs []*v1.PersistentVolume, claims []*v1.PersistentVolumeClaim) (bool, error) {
	for _, want := range pvs {
		pv, err := b.pvs.Get(want.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		if olderThan(pv.ResourceVersion, want.ResourceVersion) {
			return false, nil
		}
		if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "" {
			return false, fmt.Errorf("ClaimRef got reset for pv %q", pv.Name)
		}
		ref := want.Spec.ClaimRef
		pvc, err := b.pvcs.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", err)
		}
		if !fullyBound(pvc) {
			return false, nil
		}
	}
	for _, want := range claims {
		pvc, err := b.pvcs.PersistentVolumeClaims(want.Namespace).Get(want.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check provisioning pvc: %w", err)
		}
		if olderThan(pvc.ResourceVersion, want.ResourceVersion) {
			return false, nil
		}
		if pvc.Annotations == nil {
			return false, fmt.Errorf("selectedNode annotation reset for PVC %q", pvc.Name)
		}
		if pvc.Annotations[annSelectedNode] != node {
			return false, fmt.Errorf("provisioning failed for PVC %q", pvc.Name)
		}
		if !fullyBound(pvc) {
			return false, nil
		}
	}
	return true, nil
}

func fullyBound(pvc *v1.PersistentVolumeClaim) bool {
	_, ok := pvc.Annotations[annBindCompleted]
	return pvc.Spec.VolumeName != "" && ok
}

// olderThan compares resourceVersions as numbers (as kube's versioner does),
// falling back to "not older" for non-numeric ones.
func olderThan(have, want string) bool {
	h, err1 := strconv.ParseUint(have, 10, 64)
	w, err2 := strconv.ParseUint(want, 10, 64)
	return err1 == nil && err2 == nil && h < w
}
