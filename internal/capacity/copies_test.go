package capacity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// Copies share the template's spec and metadata (newPod): what a copy
// changes must not reach the template or the copies before it. A
// StatefulSet copy names its own pod in a label and its own claim in the
// volume the claim template replaces.
func TestCopiesLeaveTheTemplateAlone(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       "example.com/fast",
		VolumeBindingMode: &wffc,
	}
	cl := &snapshot.Cluster{Nodes: []*v1.Node{zoneNode("a1", "a", "4")}, StorageClasses: []*storagev1.StorageClass{class}}
	pod := st.MakePod("").Namespace("default").Label("app", "db").Req("cpu", "1").Obj()
	pod.Spec.SchedulerName = v1.DefaultSchedulerName
	pod.Spec.Volumes = []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "cfg", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: KindStatefulSet, Name: "db", UID: "db-uid"}}
	claim := v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	want := pod.DeepCopy()
	s := &Spec{Name: "default/db", Kind: KindStatefulSet, Pod: pod, ClaimTemplates: []v1.PersistentVolumeClaim{claim}, Replicas: 3}
	var placed []string
	res := count(t, cl, []*Spec{s}, Options{Nearest: -1, Placed: func(_, pod, _ string) { placed = append(placed, pod) }}).Specs[0]
	if res.Count != 3 {
		t.Fatalf("count %d (%s), want 3", res.Count, res.StoppedBy)
	}
	if diff := cmp.Diff(want, s.Pod); diff != "" {
		t.Errorf("the template changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"default/db-0", "default/db-1", "default/db-2"}, placed); diff != "" {
		t.Errorf("copies placed (-want +got):\n%s", diff)
	}
}
