package capacity

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
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

// The last spec's copies on one node are one pod object (shareCopies): the
// report must be the one with a pod per copy. The copies of a spec before
// the last stay one pod each: the second spec's copy, held off by required
// anti-affinity to them, is explained with the pods it would meet, by name
// (with shared copies it would name the node's first copy again and again).
func TestSharedCopiesGiveTheSameReport(t *testing.T) {
	nodes := []*v1.Node{zoneNode("a1", "a", "4500m"), zoneNode("a2", "a", "3500m"), zoneNode("b1", "b", "2500m")}
	web := func() *Spec {
		return podSpec(st.MakePod("web").Namespace("default").Label("app", "web").Req("cpu", "1").Obj())
	}
	avoid := func() *Spec {
		return podSpec(st.MakePod("lone").Namespace("default").Label("app", "lone").Req("cpu", "100m").
			PodAntiAffinity(v1.LabelTopologyZone, map[string]string{"app": "web"}).Obj())
	}
	tests := []struct {
		name  string
		specs func() []*Spec
		// named is a copy's name the report must quote.
		named string
	}{
		{name: "one spec, several copies a node", specs: func() []*Spec { return []*Spec{web()} }},
		{name: "a spec after it names its copies", specs: func() []*Spec { return []*Spec{web(), avoid()} }, named: "default/web-capacity-2"},
	}
	cfg, reg := defaults(t, "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get := func(noShare bool) *report.Capacity {
				rep, err := run(context.Background(), &snapshot.Cluster{Nodes: nodes}, tt.specs(), Options{Config: cfg, Registry: reg}, noShare)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			want, got := get(true), get(false)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report (-a pod per copy +shared copies):\n%s", diff)
			}
			if got.Specs[0].Method != report.MethodNodeLocal || got.Specs[0].Count != 9 {
				t.Errorf("first spec: %d copies by %s, want 9 node-local", got.Specs[0].Count, got.Specs[0].Method)
			}
			if tt.named != "" && !strings.Contains(fmt.Sprintf("%+v", got.Specs[1]), tt.named) {
				t.Errorf("the second spec's report does not name %s: %+v", tt.named, got.Specs[1])
			}
		})
	}
}
