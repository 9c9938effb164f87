package v1list

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func TestMarshalWritesACompactList(t *testing.T) {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
		Status:     v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}},
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "c", Image: "i"}},
			Volumes:    []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
		},
	}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
	got, err := Marshal("yaml", ns, node, pod)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
items:
- apiVersion: v1
  kind: Namespace
  metadata:
    name: ns
- apiVersion: v1
  kind: Node
  metadata:
    labels:
      node-role.kubernetes.io/control-plane: ""
    name: n1
  status:
    allocatable:
      cpu: "4"
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: ns
  spec:
    containers:
    - image: i
      name: c
      resources: {}
    volumes:
    - emptyDir: {}
      name: scratch
kind: List
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if node.Kind != "" {
		t.Errorf("Marshal set the caller's TypeMeta: %+v", node.TypeMeta)
	}

	// It reads back as the same objects.
	var back struct{ Items []runtime.RawExtension }
	if err := yaml.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	var p2 v1.Pod
	if err := yaml.Unmarshal(back.Items[2].Raw, &p2); err != nil {
		t.Fatal(err)
	}
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	if diff := cmp.Diff(pod, &p2); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestMarshalRejectsUnknownFormatsAndKindlessObjects(t *testing.T) {
	if _, err := Marshal("xml"); err == nil || !strings.Contains(err.Error(), `unsupported output format "xml"`) {
		t.Errorf("got %v, want an unsupported format error", err)
	}
	if _, err := Marshal("json", &v1.ConfigMap{}); err == nil || !strings.Contains(err.Error(), "has no kind") {
		t.Errorf("got %v, want a missing kind error", err)
	}
}
