// Package deploy holds the manifests that run kubectl-sched in a cluster;
// this test parses them strictly and checks that they fit together.
package deploy

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
)

// objects decodes every manifest strictly: unknown or duplicate fields fail.
func objects(t *testing.T) map[string][]runtime.Object {
	t.Helper()
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]runtime.Object{}
	for _, f := range files {
		if f == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufioReader(raw))
		for i := 0; ; i++ {
			doc, err := r.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := dec.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			out[f] = append(out[f], obj)
		}
	}
	return out
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	raw, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatal(err)
	}
	var want []string
	for f := range objects(t) {
		want = append(want, f)
	}
	sort.Strings(want)
	sort.Strings(k.Resources)
	if diff := cmp.Diff(want, k.Resources); diff != "" {
		t.Errorf("kustomization resources (-manifests +listed):\n%s", diff)
	}
}

func find[T runtime.Object](t *testing.T, objs map[string][]runtime.Object) []T {
	t.Helper()
	var out []T
	for _, list := range objs {
		for _, o := range list {
			if x, ok := o.(T); ok {
				out = append(out, x)
			}
		}
	}
	return out
}

func one[T runtime.Object](t *testing.T, objs map[string][]runtime.Object) T {
	t.Helper()
	xs := find[T](t, objs)
	if len(xs) != 1 {
		var zero T
		t.Fatalf("want one %T, have %d", zero, len(xs))
	}
	return xs[0]
}

func TestManifestsFitTogether(t *testing.T) {
	objs := objects(t)
	ns := one[*v1.Namespace](t, objs)
	sa := one[*v1.ServiceAccount](t, objs)
	cm := one[*v1.ConfigMap](t, objs)
	dep := one[*appsv1.Deployment](t, objs)
	svc := one[*v1.Service](t, objs)
	role := one[*rbacv1.Role](t, objs)
	for _, o := range []interface{ GetNamespace() string }{sa, cm, dep, svc, role} {
		if o.GetNamespace() != ns.Name {
			t.Errorf("%T is in namespace %q, want %q", o, o.GetNamespace(), ns.Name)
		}
	}

	// The configuration loads, names the kubectl-sched profile and elects
	// on a Lease the Role lets it renew.
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if len(cfg.Profiles) != 1 || *cfg.Profiles[0].SchedulerName != "kubectl-sched" {
		t.Errorf("profiles = %v, want one named kubectl-sched", cfg.Profiles)
	}
	le := cfg.LeaderElection
	if le.LeaderElect == nil || !*le.LeaderElect || le.ResourceNamespace != ns.Name {
		t.Errorf("leaderElection = %+v, want on, in namespace %s", le, ns.Name)
	}
	if !allows(role.Rules, "coordination.k8s.io", "leases", le.ResourceName, "get", "update", "create") {
		t.Errorf("Role %s does not allow get/update/create of Lease %s", role.Name, le.ResourceName)
	}

	// Two replicas with leader election, run by the ServiceAccount, reading
	// the ConfigMap, serving metrics on the port the Service targets.
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", dep.Spec.Replicas)
	}
	pod := dep.Spec.Template
	if pod.Spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName = %q, want %q", pod.Spec.ServiceAccountName, sa.Name)
	}
	c := pod.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	if len(c.VolumeMounts) != 1 || !strings.Contains(args, "--config="+c.VolumeMounts[0].MountPath+"/config.yaml") {
		t.Errorf("args %q do not read the config from the mounted ConfigMap %v", args, c.VolumeMounts)
	}
	if pod.Spec.Volumes[0].ConfigMap == nil || pod.Spec.Volumes[0].ConfigMap.Name != cm.Name {
		t.Errorf("volume %+v is not ConfigMap %s", pod.Spec.Volumes[0], cm.Name)
	}
	if !strings.Contains(args, "--metrics-bind-address=0.0.0.0:10259") || c.Ports[0].ContainerPort != 10259 {
		t.Errorf("metrics: args %q, ports %v", args, c.Ports)
	}
	if svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name {
		t.Errorf("Service targets %v, container port is %q", svc.Spec.Ports[0].TargetPort, c.Ports[0].Name)
	}
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v || dep.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("Service selector %s=%s does not select the pods", k, v)
		}
	}
	for _, b := range find[*rbacv1.ClusterRoleBinding](t, objs) {
		checkSubject(t, b.Name, b.Subjects, sa)
	}
	for _, b := range find[*rbacv1.RoleBinding](t, objs) {
		checkSubject(t, b.Name, b.Subjects, sa)
	}
}

func checkSubject(t *testing.T, binding string, subjects []rbacv1.Subject, sa *v1.ServiceAccount) {
	t.Helper()
	if len(subjects) != 1 || subjects[0].Kind != "ServiceAccount" || subjects[0].Name != sa.Name || subjects[0].Namespace != sa.Namespace {
		t.Errorf("binding %s subjects %v, want only ServiceAccount %s/%s", binding, subjects, sa.Namespace, sa.Name)
	}
}

// TestClusterRoleIsWhatTheSchedulerUses lists what `run` does against the
// API, no more: the end-to-end test runs the scheduler as the
// ServiceAccount to prove it suffices.
func TestClusterRoleIsWhatTheSchedulerUses(t *testing.T) {
	cr := one[*rbacv1.ClusterRole](t, objects(t))
	type perm struct{ group, resource, verb string }
	var got []perm
	for _, r := range cr.Rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("unexpected rule %+v", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if g == "*" || res == "*" || v == "*" {
						t.Errorf("wildcard in rule %+v", r)
					}
					got = append(got, perm{g, res, v})
				}
			}
		}
	}
	var want []perm
	for _, res := range []string{"pods", "nodes", "namespaces", "persistentvolumeclaims", "persistentvolumes", "services", "replicationcontrollers"} {
		want = append(want, perm{"", res, "list"}, perm{"", res, "watch"})
	}
	for _, res := range []string{"replicasets", "statefulsets"} {
		want = append(want, perm{"apps", res, "list"}, perm{"apps", res, "watch"})
	}
	for _, res := range []string{"storageclasses", "csinodes", "csidrivers", "csistoragecapacities"} {
		want = append(want, perm{"storage.k8s.io", res, "list"}, perm{"storage.k8s.io", res, "watch"})
	}
	want = append(want, perm{"", "persistentvolumes", "update"}, perm{"", "persistentvolumeclaims", "update"})
	want = append(want, perm{"policy", "poddisruptionbudgets", "list"}, perm{"policy", "poddisruptionbudgets", "watch"})
	// DynamicResources: the DRA informers; claims written by PreBind,
	// Unreserve, PostFilter and for DRA-backed extended resources.
	for _, res := range []string{"deviceclasses", "resourceslices", "devicetaintrules", "resourceclaims"} {
		want = append(want, perm{"resource.k8s.io", res, "list"}, perm{"resource.k8s.io", res, "watch"})
	}
	for _, v := range []string{"get", "update", "create", "delete"} {
		want = append(want, perm{"resource.k8s.io", "resourceclaims", v})
	}
	want = append(want, perm{"resource.k8s.io", "resourceclaims/status", "update"}, perm{"resource.k8s.io", "resourceclaims/status", "patch"})
	// GenericWorkload: the PodGroup and Workload informers, and the
	// PodGroupInitiallyScheduled condition written to podgroups/status.
	want = append(want, perm{"scheduling.k8s.io", "podgroups", "list"}, perm{"scheduling.k8s.io", "podgroups", "watch"},
		perm{"scheduling.k8s.io", "podgroups/status", "patch"}, perm{"scheduling.k8s.io", "workloads", "list"}, perm{"scheduling.k8s.io", "workloads", "watch"})
	want = append(want, perm{"", "pods/binding", "create"}, perm{"", "pods/status", "patch"}, perm{"", "pods", "delete"}, perm{"", "pods", "get"})
	for _, g := range []string{"events.k8s.io", ""} {
		for _, v := range []string{"create", "patch", "update"} {
			want = append(want, perm{g, "events", v})
		}
	}
	less := func(a, b perm) bool { return a.group+"/"+a.resource+"/"+a.verb < b.group+"/"+b.resource+"/"+b.verb }
	sort.Slice(got, func(i, j int) bool { return less(got[i], got[j]) })
	sort.Slice(want, func(i, j int) bool { return less(want[i], want[j]) })
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(perm{})); diff != "" {
		t.Errorf("ClusterRole permissions (-want +got):\n%s", diff)
	}
}

// allows reports whether the rules grant every verb on the named object.
func allows(rules []rbacv1.PolicyRule, group, resource, name string, verbs ...string) bool {
	for _, v := range verbs {
		ok := false
		for _, r := range rules {
			if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, v) && (len(r.ResourceNames) == 0 || has(r.ResourceNames, name)) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
