package snapshot

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func sensitivePod() *v1.Pod {
	c := v1.Container{
		Name: "app", Image: "app:1",
		Command: []string{"/bin/app", "--password=hunter2"}, Args: []string{"--token=abc"},
		Env:           []v1.EnvVar{{Name: "DB_PASSWORD", Value: "hunter2"}, {Name: "FROM_SECRET", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}},
		EnvFrom:       []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "s"}}}},
		LivenessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check", "--secret"}}}},
		Ports:         []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}},
		Resources:     v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}},
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"env":"hunter2"}}`,
				"volume.kubernetes.io/selected-node":               "n1",
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: v1.PodSpec{Containers: []v1.Container{c}, InitContainers: []v1.Container{c}, NodeName: "n1",
			Tolerations: []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}}},
	}
}

func TestStripKeepsWhatTheSchedulerReadsAndDropsSecrets(t *testing.T) {
	cl := &Cluster{Pods: []*v1.Pod{sensitivePod()}, Others: []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "g", "namespace": "ns", "annotations": map[string]any{"note": "x"}, "managedFields": []any{map[string]any{"manager": "m"}}},
	}}}}
	cl.Strip()
	p := cl.Pods[0]
	if p.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	if d := cmp.Diff(map[string]string{"volume.kubernetes.io/selected-node": "n1"}, p.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	for _, c := range append(p.Spec.Containers, p.Spec.InitContainers...) {
		if c.Command != nil || c.Args != nil || c.EnvFrom != nil || c.LivenessProbe != nil {
			t.Errorf("container %s keeps command/args/envFrom/probes: %+v", c.Name, c)
		}
		if d := cmp.Diff([]v1.EnvVar{{Name: "DB_PASSWORD"}, {Name: "FROM_SECRET"}}, c.Env); d != "" {
			t.Errorf("env (-want +got):\n%s", d)
		}
		if c.Image != "app:1" || len(c.Ports) != 1 || c.Resources.Requests.Cpu().MilliValue() != 500 {
			t.Errorf("container %s lost what the scheduler reads: %+v", c.Name, c)
		}
	}
	if p.Spec.NodeName != "n1" || len(p.Spec.Tolerations) != 1 || p.Labels["app"] != "web" {
		t.Errorf("pod lost what the scheduler reads: %+v", p)
	}
	if u := cl.Others[0]; u.GetManagedFields() != nil || u.GetAnnotations() != nil {
		t.Errorf("PodGroup keeps managedFields or annotations: %v", u.Object)
	}
	b, _ := cl.Marshal("yaml")
	for _, secret := range []string{"hunter2", "--token", "--secret", "last-applied"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("dump contains %q", secret)
		}
	}
}

func TestMarshalRoundTripsThroughTheLoader(t *testing.T) {
	in, err := LoadPaths([]string{"../../testdata/clusters/small.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.PriorityClasses = nil
	in.Others = []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": map[string]any{"name": "g", "namespace": "ns"}}}}
	in.Workloads = testWorkloads()
	in.Warnings = nil
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			b, err := in.Marshal(format)
			if err != nil {
				t.Fatal(err)
			}
			out := &Cluster{}
			if err := out.AddData("dump."+format, b); err != nil {
				t.Fatal(err)
			}
			if len(out.Warnings) != 0 {
				t.Errorf("warnings reading the dump back: %v", out.Warnings)
			}
			byName := func(c *Cluster) map[string]any {
				m := map[string]any{}
				for _, n := range c.Nodes {
					m["node/"+n.Name] = n
				}
				for _, p := range c.Pods {
					m["pod/"+p.Namespace+"/"+p.Name] = p
				}
				for _, u := range c.Others {
					m["other/"+u.GetName()] = u.Object
				}
				for _, w := range c.Workloads.Workloads {
					w.TypeMeta = metav1.TypeMeta{} // the dump sets it
					m["workload/"+w.Namespace+"/"+w.Name] = w
				}
				for _, pg := range c.Workloads.PodGroups {
					pg.TypeMeta = metav1.TypeMeta{}
					m["podgroup/"+pg.Namespace+"/"+pg.Name] = pg
				}
				return m
			}
			if d := cmp.Diff(byName(in), byName(out)); d != "" {
				t.Errorf("round trip (-in +out):\n%s", d)
			}
		})
	}
}

// TestMarshalKeepsEveryKindTheEngineReads writes the volumes cluster (every
// storage kind), with namespaces, PriorityClasses and PodGroups of both API
// groups, and reads it back: every object of every kind survives.
func TestMarshalKeepsEveryKindTheEngineReads(t *testing.T) {
	in, err := LoadPaths([]string{"../../testdata/kubebench/volumes-cluster.yaml", "../../examples/cluster.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.PriorityClasses = append(in.PriorityClasses, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000})
	in.Workloads = testWorkloads()
	in.Others = append(in.Others,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": map[string]any{"name": "g", "namespace": "ns"}}})
	in.Warnings = nil
	kinds := func(c *Cluster) map[string][]string {
		m := map[string][]string{}
		add := func(kind string, meta metav1.Object) {
			m[kind] = append(m[kind], meta.GetNamespace()+"/"+meta.GetName())
		}
		for _, o := range c.Namespaces {
			add("Namespace", o)
		}
		for _, o := range c.Nodes {
			add("Node", o)
		}
		for _, o := range c.Pods {
			add("Pod", o)
		}
		for _, o := range c.PDBs {
			add("PodDisruptionBudget", o)
		}
		for _, o := range c.PVCs {
			add("PersistentVolumeClaim", o)
		}
		for _, o := range c.PVs {
			add("PersistentVolume", o)
		}
		for _, o := range c.StorageClasses {
			add("StorageClass", o)
		}
		for _, o := range c.CSINodes {
			add("CSINode", o)
		}
		for _, o := range c.CSIDrivers {
			add("CSIDriver", o)
		}
		for _, o := range c.CSIStorageCapacities {
			add("CSIStorageCapacity", o)
		}
		for _, o := range c.PriorityClasses {
			add("PriorityClass", o)
		}
		for _, o := range c.Others {
			add(o.GetAPIVersion()+" "+o.GetKind(), o)
		}
		for _, o := range c.Workloads.Workloads {
			add("scheduling.k8s.io/v1beta1 Workload", o)
		}
		for _, o := range c.Workloads.PodGroups {
			add("scheduling.k8s.io/v1beta1 PodGroup", o)
		}
		for _, v := range m {
			sort.Strings(v) // the dump is sorted
		}
		return m
	}
	want := kinds(in)
	for _, k := range []string{"Namespace", "Node", "Pod", "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
		"CSIStorageCapacity", "PriorityClass", "scheduling.k8s.io/v1beta1 Workload", "scheduling.k8s.io/v1beta1 PodGroup", "scheduling.x-k8s.io/v1alpha1 PodGroup"} {
		if len(want[k]) == 0 {
			t.Fatalf("the input has no %s: the test would prove nothing", k)
		}
	}
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			b, err := in.Marshal(format)
			if err != nil {
				t.Fatal(err)
			}
			out := &Cluster{}
			if err := out.AddData("dump."+format, b); err != nil {
				t.Fatal(err)
			}
			if len(out.Warnings) != 0 {
				t.Errorf("warnings reading the dump back: %v", out.Warnings)
			}
			if d := cmp.Diff(want, kinds(out)); d != "" {
				t.Errorf("objects (-in +out):\n%s", d)
			}
		})
	}
}
