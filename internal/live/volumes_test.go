package live

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func TestAPIVolumeBinder(t *testing.T) {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}}
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", UID: "uid-c"}}
	boundPV := pv.DeepCopy()
	boundPV.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "c", UID: "uid-c"}
	boundClaim := claim.DeepCopy()
	boundClaim.Spec.VolumeName = "pv"
	boundClaim.Annotations = map[string]string{annBindCompleted: "yes", annSelectedNode: "n1"}
	dropped := claim.DeepCopy()
	dropped.Annotations = map[string]string{"other": "x"}
	tests := []struct {
		name      string
		listerPV  *v1.PersistentVolume
		listerPVC *v1.PersistentVolumeClaim
		pvs       []*v1.PersistentVolume
		pvcs      []*v1.PersistentVolumeClaim
		wantErr   string
	}{
		{"a static binding completed by the PV controller succeeds", boundPV, boundClaim, []*v1.PersistentVolume{boundPV}, nil, ""},
		{"a provisioned claim bound on the selected node succeeds", boundPV, boundClaim, nil, []*v1.PersistentVolumeClaim{boundClaim}, ""},
		{"a dropped selected-node annotation means provisioning failed", boundPV, dropped, nil, []*v1.PersistentVolumeClaim{boundClaim}, `provisioning failed for PVC "c"`},
		{"a PV whose claimRef was reset fails", pv, boundClaim, []*v1.PersistentVolume{boundPV}, nil, `ClaimRef got reset for pv "pv"`},
		{"a claim never bound times out", boundPV, claim, []*v1.PersistentVolume{boundPV}, nil, "context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(pv.DeepCopy(), claim.DeepCopy())
			pvIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			pvcIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			_ = pvIdx.Add(tt.listerPV)
			_ = pvcIdx.Add(tt.listerPVC)
			b := apiVolumeBinder{client: client, pvs: corelisters.NewPersistentVolumeLister(pvIdx), pvcs: corelisters.NewPersistentVolumeClaimLister(pvcIdx)}
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{NodeName: "n1"}}
			err := b.BindPodVolumes(ctx, pod, tt.pvs, tt.pvcs)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("BindPodVolumes: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("BindPodVolumes error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
