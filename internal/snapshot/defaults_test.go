package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// handWritten is a dump as a user writes it: no allocatable, requests only
// as limits, a hostNetwork port without hostPort, a namespace without its
// name label.
const handWritten = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Namespace
  metadata: {name: web}
- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: web}
  spec:
    hostNetwork: true
    containers: [{name: c, image: x, ports: [{containerPort: 8080}], resources: {limits: {cpu: "1", memory: 2Gi}}}]
`

// TestLoadAppliesTheAPIServersDefaults loads a hand-written dump by both
// decoding paths and wants the objects as an API server stores them.
func TestLoadAppliesTheAPIServersDefaults(t *testing.T) {
	typed, mapped, et, em := loadBoth(t, "c.yaml", []byte(handWritten))
	if !sameLoads(t, "hand-written dump", "map path", typed, mapped, et, em) {
		return
	}
	for _, c := range []*Cluster{typed, mapped} {
		n := c.Nodes[0]
		if diff := cmp.Diff(n.Status.Capacity, n.Status.Allocatable, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("node allocatable is not its capacity (-capacity +allocatable):\n%s", diff)
		}
		ctr := c.Pods[0].Spec.Containers[0]
		if got := ctr.Resources.Requests.Cpu().String() + "," + ctr.Resources.Requests.Memory().String(); got != "1,2Gi" {
			t.Errorf("requests %s, want the limits 1,2Gi", got)
		}
		if got := ctr.Ports[0]; got.HostPort != 8080 || got.Protocol != v1.ProtocolTCP {
			t.Errorf("port %+v, want hostPort 8080 and protocol TCP", got)
		}
		if got := c.Namespaces[0].Labels[v1.LabelMetadataName]; got != "web" {
			t.Errorf("namespace label %q, want web", got)
		}
		if got := c.Pods[0].Spec.SchedulerName; got != v1.DefaultSchedulerName {
			t.Errorf("schedulerName %q", got)
		}
	}
}

// TestLoadRefusesWhatTheAPIServerRefuses wants kubectl's wording of the
// API server's refusal, at the object, from both paths.
func TestLoadRefusesWhatTheAPIServerRefuses(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{{
		name: "a pod alone",
		data: `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]
`,
		want: `c.yaml:1: The Pod "web" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	}, {
		name: "a pod in a List",
		data: `{"apiVersion": "v1", "kind": "List", "items": [
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu"},
 "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"example.com/gpu": "1"}}}]}}]}`,
		want: `c.yaml:1: items[0]: The Pod "gpu" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, et, em := loadBoth(t, "c.yaml", []byte(tc.data))
			for _, err := range []error{et, em} {
				if err == nil || err.Error() != tc.want {
					t.Errorf("error %v\nwant %s", err, tc.want)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("error %v is not ErrInvalid (exit 2)", err)
				}
			}
		})
	}
}

// TestOtherCountIsWhatMarshalWrites counts the objects a dump with every
// kind writes, DRA ones included, besides its nodes and pods.
func TestOtherCountIsWhatMarshalWrites(t *testing.T) {
	for _, f := range []string{"../../examples/dra.yaml", "../../examples/cluster.yaml"} {
		c, err := LoadPaths([]string{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Marshal("yaml")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "d.yaml"), out, 0o600); err != nil {
			t.Fatal(err)
		}
		objs, err := ReadObjects([]string{filepath.Join(dir, "d.yaml")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		others := 0
		for _, o := range objs {
			if k := o.Kind(); k != "Node" && k != "Pod" {
				others++
			}
		}
		if got := c.OtherCount(); got != others {
			t.Errorf("%s: OtherCount %d, the dump has %d objects other than nodes and pods", f, got, others)
		}
		if strings.Contains(f, "dra") && c.DRA.Empty() {
			t.Errorf("%s: no DRA objects to count", f)
		}
	}
}

// TestUnboundClaimsGetTheDefaultStorageClass follows kube v1.37.2's
// DefaultStorageClass admission (admission_test.go: no default, one
// default, the beta annotation, two defaults: the newest) and leaves
// claims with a class, the beta class annotation, or a volume alone.
func TestUnboundClaimsGetTheDefaultStorageClass(t *testing.T) {
	const classes = `apiVersion: v1
kind: List
items:
- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: old, creationTimestamp: "2026-01-01T00:00:00Z", annotations: {storageclass.kubernetes.io/is-default-class: "true"}}, provisioner: a}
- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: new, creationTimestamp: "2026-02-01T00:00:00Z", annotations: {storageclass.beta.kubernetes.io/is-default-class: "true"}}, provisioner: a}
- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: other, creationTimestamp: "2026-03-01T00:00:00Z", annotations: {storageclass.kubernetes.io/is-default-class: "false"}}, provisioner: a}
`
	const claims = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: none}, spec: {resources: {requests: {storage: 1Gi}}}}
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: empty}, spec: {storageClassName: "", resources: {requests: {storage: 1Gi}}}}
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: named}, spec: {storageClassName: other, resources: {requests: {storage: 1Gi}}}}
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: beta, annotations: {volume.beta.kubernetes.io/storage-class: other}}, spec: {resources: {requests: {storage: 1Gi}}}}
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: bound}, spec: {volumeName: pv, resources: {requests: {storage: 1Gi}}}}
`
	dir := t.TempDir()
	for name, data := range map[string]string{"a-claims.yaml": claims, "b-classes.yaml": classes} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, withClasses := range []bool{false, true} {
		paths := []string{filepath.Join(dir, "a-claims.yaml")}
		if withClasses {
			paths = append(paths, filepath.Join(dir, "b-classes.yaml"))
		}
		c, err := LoadPaths(paths, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, pvc := range c.PVCs {
			class := "<nil>"
			if pvc.Spec.StorageClassName != nil {
				class = *pvc.Spec.StorageClassName
			}
			got[fmt.Sprint(withClasses)+" "+pvc.Name] = class
		}
	}
	want := map[string]string{
		"false none": "<nil>", "false empty": "", "false named": "other", "false beta": "<nil>", "false bound": "<nil>",
		"true none": "new", "true empty": "", "true named": "other", "true beta": "<nil>", "true bound": "<nil>",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
}

// TestAdmitRuntimeClass follows kube v1.37.2's RuntimeClass admission
// (plugin/pkg/admission/runtimeclass admission_test.go: setOverhead and
// setScheduling), what a pod has already winning over its class.
func TestAdmitRuntimeClass(t *testing.T) {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("160Mi")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"runtime": "kata", "arch": "amd64"},
			Tolerations: []v1.Toleration{{Key: "sandbox", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}}}
	pod := func(class string, mut func(*v1.Pod)) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
		if class != "" {
			p.Spec.RuntimeClassName = &class
		}
		if mut != nil {
			mut(p)
		}
		return p
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		want     *v1.Pod
		wantWarn bool
	}{{
		name: "no runtimeClassName: unchanged",
		pod:  pod("", nil),
		want: pod("", nil),
	}, {
		name: "the class's overhead, nodeSelector and tolerations",
		pod:  pod("kata", nil),
		want: pod("kata", func(p *v1.Pod) {
			p.Spec.Overhead = rc.Overhead.PodFixed
			p.Spec.NodeSelector = map[string]string{"runtime": "kata", "arch": "amd64"}
			p.Spec.Tolerations = rc.Scheduling.Tolerations
		}),
	}, {
		name: "the pod's nodeSelector is merged with the class's; its own toleration is not added twice",
		pod: pod("kata", func(p *v1.Pod) {
			p.Spec.NodeSelector = map[string]string{"zone": "a"}
			p.Spec.Tolerations = []v1.Toleration{{Key: "sandbox", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
		}),
		want: pod("kata", func(p *v1.Pod) {
			p.Spec.Overhead = rc.Overhead.PodFixed
			p.Spec.NodeSelector = map[string]string{"zone": "a", "runtime": "kata", "arch": "amd64"}
			p.Spec.Tolerations = []v1.Toleration{{Key: "sandbox", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
		}),
	}, {
		name: "an admitted pod keeps its overhead and nodeSelector values",
		pod: pod("kata", func(p *v1.Pod) {
			p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
			p.Spec.NodeSelector = map[string]string{"runtime": "old"}
		}),
		want: pod("kata", func(p *v1.Pod) {
			p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
			p.Spec.NodeSelector = map[string]string{"runtime": "old", "arch": "amd64"}
			p.Spec.Tolerations = rc.Scheduling.Tolerations
		}),
	}, {
		name:     "a class the dump lacks: a warning",
		pod:      pod("gvisor", nil),
		want:     pod("gvisor", nil),
		wantWarn: true,
	}, {
		name: "a class the dump lacks, for an admitted pod (it has overhead): no warning",
		pod:  pod("gvisor", func(p *v1.Pod) { p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")} }),
		want: pod("gvisor", func(p *v1.Pod) { p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")} }),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := AdmitRuntimeClass(tc.pod, []*nodev1.RuntimeClass{rc})
			if (w != "") != tc.wantWarn {
				t.Errorf("warning %q, want one: %v", w, tc.wantWarn)
			}
			if diff := cmp.Diff(tc.want, tc.pod, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			again := tc.pod.DeepCopy()
			AdmitRuntimeClass(again, []*nodev1.RuntimeClass{rc})
			if diff := cmp.Diff(tc.pod, again); diff != "" {
				t.Errorf("admitting twice changes the pod (-once +twice):\n%s", diff)
			}
		})
	}
}

// Pods whose tolerations are one shared list (Cluster.Sharer) and that name
// different RuntimeClasses each get their own class's toleration: the
// admission appends to a clipped list, not into the room past the shared
// one's end, which the other pod's append would overwrite.
func TestAdmitRuntimeClassKeepsSharedTolerations(t *testing.T) {
	shared := make([]v1.Toleration, 1, 4)
	shared[0] = v1.Toleration{Key: "base", Operator: v1.TolerationOpExists}
	class := func(name, key string) *nodev1.RuntimeClass {
		return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: name,
			Scheduling: &nodev1.Scheduling{Tolerations: []v1.Toleration{{Key: key, Operator: v1.TolerationOpExists}}}}
	}
	classes := []*nodev1.RuntimeClass{class("a", "ka"), class("b", "kb")}
	pod := func(rc string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + rc, Namespace: "ns"}, Spec: v1.PodSpec{RuntimeClassName: &rc, Tolerations: shared}}
	}
	pa, pb := pod("a"), pod("b")
	AdmitRuntimeClass(pa, classes)
	AdmitRuntimeClass(pb, classes)
	keys := func(p *v1.Pod) (ks []string) {
		for _, t := range p.Spec.Tolerations {
			ks = append(ks, t.Key)
		}
		return ks
	}
	if diff := cmp.Diff([]string{"base", "ka"}, keys(pa)); diff != "" {
		t.Errorf("pod a's tolerations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"base", "kb"}, keys(pb)); diff != "" {
		t.Errorf("pod b's tolerations (-want +got):\n%s", diff)
	}
	if len(shared) != 1 || shared[0].Key != "base" {
		t.Errorf("the shared list changed: %v", shared)
	}
}
