package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

var podGroupGVR = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}

func podGroup(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"name": name, "namespace": ns},
	}}
}

func fakeClients(withPodGroups bool) (*Clients, *fake.Clientset) {
	kc := fake.NewClientset(
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "x"}}},
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "a"}},
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "b"}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb", Namespace: "a"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}},
		&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "a"}},
		&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}},
		&storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "cap", Namespace: "a"}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "b"}},
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: "a"}},
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf", Namespace: "a"}},
		// kube's own Workload API, listed typed where it is served.
		&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "k1", Namespace: "a"}},
		&schedulingv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "b"}},
	)
	scheme := runtime.NewScheme()
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{podGroupGVR: "PodGroupList"},
		podGroup("a", "g1"), podGroup("b", "g2"))
	disc := kc.Discovery().(*fakediscovery.FakeDiscovery)
	if withPodGroups {
		disc.Resources = []*metav1.APIResourceList{
			{GroupVersion: "scheduling.x-k8s.io/v1alpha1", APIResources: []metav1.APIResource{{Name: "podgroups", Namespaced: true, Kind: "PodGroup"}}},
			{GroupVersion: "scheduling.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "priorityclasses", Kind: "PriorityClass"}}},
			{GroupVersion: "scheduling.k8s.io/v1beta1", APIResources: []metav1.APIResource{
				{Name: "workloads", Namespaced: true, Kind: "Workload"}, {Name: "podgroups", Namespaced: true, Kind: "PodGroup"}}},
		}
	}
	return &Clients{Kube: kc, Dynamic: dc, Discovery: disc}, kc
}

func names(cl *snapshot.Cluster) []string {
	var out []string
	for _, n := range cl.Nodes {
		out = append(out, "node/"+n.Name)
	}
	for _, n := range cl.Namespaces {
		out = append(out, "namespace/"+n.Name)
	}
	for _, p := range cl.Pods {
		out = append(out, "pod/"+p.Namespace+"/"+p.Name)
	}
	for _, p := range cl.PDBs {
		out = append(out, "pdb/"+p.Namespace+"/"+p.Name)
	}
	for _, p := range cl.PVCs {
		out = append(out, "pvc/"+p.Namespace+"/"+p.Name)
	}
	for _, p := range cl.PVs {
		out = append(out, "pv/"+p.Name)
	}
	for _, s := range cl.StorageClasses {
		out = append(out, "storageclass/"+s.Name)
	}
	for _, c := range cl.CSINodes {
		out = append(out, "csinode/"+c.Name)
	}
	for _, c := range cl.CSIDrivers {
		out = append(out, "csidriver/"+c.Name)
	}
	for _, c := range cl.CSIStorageCapacities {
		out = append(out, "csistoragecapacity/"+c.Namespace+"/"+c.Name)
	}
	for _, p := range cl.PriorityClasses {
		out = append(out, "priorityclass/"+p.Name)
	}
	for _, s := range cl.Services {
		out = append(out, "service/"+s.Namespace+"/"+s.Name)
	}
	for _, u := range cl.Others {
		out = append(out, u.GetAPIVersion()+" podgroup/"+u.GetNamespace()+"/"+u.GetName())
	}
	for _, w := range cl.Workloads.Workloads {
		out = append(out, "workload/"+w.Namespace+"/"+w.Name)
	}
	for _, pg := range cl.Workloads.PodGroups {
		out = append(out, "scheduling.k8s.io/v1beta1 podgroup/"+pg.Namespace+"/"+pg.Name)
	}
	return out
}

func TestListClusterListsWhatTheEngineReads(t *testing.T) {
	tests := []struct {
		name      string
		ns        string
		podGroups bool
		want      []string
	}{
		{"every namespace, with both PodGroup APIs", "", true, []string{
			"node/n1", "namespace/a", "namespace/b", "pod/a/p1", "pod/b/p2", "pdb/a/pdb", "pvc/a/claim", "pv/pv1", "storageclass/fast",
			"csinode/n1", "csidriver/csi.example.com", "csistoragecapacity/a/cap", "priorityclass/high", "service/b/svc",
			"scheduling.x-k8s.io/v1alpha1 podgroup/a/g1", "scheduling.x-k8s.io/v1alpha1 podgroup/b/g2",
			"workload/b/w1", "scheduling.k8s.io/v1beta1 podgroup/a/k1"}},
		{"one namespace: its objects, its namespace, every cluster-scoped object", "a", true, []string{
			"node/n1", "namespace/a", "pod/a/p1", "pdb/a/pdb", "pvc/a/claim", "pv/pv1", "storageclass/fast",
			"csinode/n1", "csidriver/csi.example.com", "csistoragecapacity/a/cap", "priorityclass/high",
			"scheduling.x-k8s.io/v1alpha1 podgroup/a/g1", "scheduling.k8s.io/v1beta1 podgroup/a/k1"}},
		{"no PodGroup API is fine", "", false, []string{
			"node/n1", "namespace/a", "namespace/b", "pod/a/p1", "pod/b/p2", "pdb/a/pdb", "pvc/a/claim", "pv/pv1", "storageclass/fast",
			"csinode/n1", "csidriver/csi.example.com", "csistoragecapacity/a/cap", "priorityclass/high", "service/b/svc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, kc := fakeClients(tt.podGroups)
			cl, err := ListCluster(context.Background(), c, ListOptions{Namespace: tt.ns})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, names(cl)); d != "" {
				t.Errorf("listed (-want +got):\n%s", d)
			}
			if len(cl.Warnings) != 0 {
				t.Errorf("warnings: %v", cl.Warnings)
			}
			for _, a := range kc.Actions() {
				if r := a.GetResource().Resource; r == "secrets" || r == "configmaps" {
					t.Errorf("read %s", r)
				}
				if a.GetVerb() != "list" && a.GetResource().Resource != "group" && a.GetResource().Resource != "resource" {
					t.Errorf("action %s %s: only lists (and discovery) are allowed", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}

func TestListClusterWarnsAboutForbiddenOptionalKinds(t *testing.T) {
	c, kc := fakeClients(false)
	kc.PrependReactor("list", "persistentvolumes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumes"}, "", errors.New("no RBAC"))
	})
	cl, err := ListCluster(context.Background(), c, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Warnings) != 1 || !strings.HasPrefix(cl.Warnings[0], "warning: cannot list persistentvolumes (") {
		t.Errorf("warnings = %q", cl.Warnings)
	}
	kc.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no RBAC"))
	})
	if _, err := ListCluster(context.Background(), c, ListOptions{}); err == nil || !strings.HasPrefix(err.Error(), "listing pods: ") {
		t.Errorf("err = %v, want listing pods: forbidden", err)
	}
}

func TestListClusterWarnsAboutAMissingNamespace(t *testing.T) {
	c, kc := fakeClients(false)
	cl, err := ListCluster(context.Background(), c, ListOptions{Namespace: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`warning: namespace "nope" not found: the snapshot has no pods or other objects of it`}
	if d := cmp.Diff(want, cl.Warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	// Who may not list namespaces cannot tell: only that warning.
	kc.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New("no RBAC"))
	})
	if cl, err = ListCluster(context.Background(), c, ListOptions{Namespace: "a"}); err != nil {
		t.Fatal(err)
	}
	if len(cl.Warnings) != 1 || !strings.HasPrefix(cl.Warnings[0], "warning: cannot list namespaces (") {
		t.Errorf("warnings = %q, want only the one about listing namespaces", cl.Warnings)
	}
}

func TestListClusterReportsItsPages(t *testing.T) {
	c, _ := fakeClients(false)
	listed := 0
	cl, err := ListCluster(WithListProgress(context.Background(), func(n int) { listed += n }), c, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := len(cl.Nodes) + len(cl.Pods) + len(cl.Namespaces) + len(cl.PDBs) + len(cl.PVCs) + len(cl.PVs) + len(cl.StorageClasses) +
		len(cl.CSINodes) + len(cl.CSIDrivers) + len(cl.CSIStorageCapacities) + len(cl.PriorityClasses) + len(cl.Services) +
		len(cl.ReplicationControllers) + len(cl.ReplicaSets) + len(cl.StatefulSets)
	if listed != want || want == 0 {
		t.Errorf("progress counted %d objects, want %d", listed, want)
	}
}
