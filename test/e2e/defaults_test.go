package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/internal/defaults"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// TestDefaultingAsTheAPIServer loads every example and golden input of the
// repository twice, as written and after a real API server's create, and
// wants the same decisions: the loader's defaulting (internal/defaults)
// makes of a manifest what the API server stores.
//
//   - Cluster dumps (examples/, testdata/clusters, testdata/gang,
//     testdata/conformance/*/snapshot.json, testdata/kubebench, and
//     testdata/defaulting.yaml here: issue #33's three cases) are dry-run as written and
//     after the round trip (`dryrun -o json`, the summary's timings aside).
//   - Workload specs (examples/web.yaml, web-zones.yaml,
//     testdata/kubebench/whatif) are counted by `capacity -f` on
//     examples/cluster.yaml, the node template (examples/m6i.yaml) with
//     `--add-nodes`; pods without nodes (examples/new-pod.yaml) are
//     dry-run beside examples/cluster.yaml.
//
// The round trip: namespaces, PriorityClasses and RuntimeClasses (which
// admission reads; a class pods name and the input lacks is made with
// their priority or overhead) are created, then every other object is created with dryRun=All, whose
// answer is the object as the API server would store and return it
// (defaulted, mutated by admission, validated) without keeping it: inputs
// reuse names across files. What the API server sets at creation and a
// dump keeps (uid, creationTimestamp, deletionTimestamp, resourceVersion)
// is taken from the file, and so is the status of pods, volumes, claims
// and ResourceClaims, which a create resets (a dump's status was written
// through the status subresource), and a pod's spec.priority without a
// priorityClassName (admitted with a class the input lacks; the API server
// refuses it given). Kinds the API server does not serve
// (scheduler-plugins' PodGroup CRD) and, in dumps, kinds the loader does
// not read are kept as written, as are the known-invalid objects below.
// The cluster runs with GenericWorkload, TopologyAwareWorkloadScheduling and VolumeBindMountOptions on,
// for the inputs that use their fields.
func TestDefaultingAsTheAPIServer(t *testing.T) {
	if cluster.Disabled() {
		t.Skipf("%s=0: end-to-end tests are off", cluster.EnvE2E)
	}
	// A cluster of its own: the test changes namespaces and PriorityClasses.
	// Native gangs (pods' spec.schedulingGroup, scheduling.k8s.io/v1beta1
	// PodGroups) need GenericWorkload, their schedulingConstraints
	// (testdata/kubebench/gang-topology-*) TopologyAwareWorkloadScheduling
	// (alpha: forbidden without it), and the DRA snapshots' volume
	// mounts' bindMountOptions (which NodeDeclaredFeatures reads)
	// VolumeBindMountOptions, both off by default in v1.37: without them
	// the API server drops the fields.
	c := cluster.StartForTest(t, cluster.Options{ExtraAPIServerArgs: []string{
		"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,VolumeBindMountOptions=true", "--runtime-config=scheduling.k8s.io/v1beta1=true"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	r := &roundTripper{dyn: dyn, mapper: mapper}

	root := filepath.Join("..", "..")
	var dumps []string
	for _, pat := range []string{"examples/*.yaml", "examples/*/*.yaml", "testdata/clusters/*.yaml", "testdata/gang/*.yaml", "testdata/conformance/*/snapshot.json",
		"testdata/kubebench/*.yaml", "testdata/kubebench/whatif/*.yaml", "internal/cli/testdata/*.yaml", "internal/snapshot/testdata/*.yaml",
		"test/e2e/testdata/defaulting.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		dumps = append(dumps, m...)
	}
	sort.Strings(dumps)
	example := filepath.Join(root, "examples", "cluster.yaml")
	web := filepath.Join(root, "examples", "web.yaml")
	checked := 0
	storedDir := t.TempDir()
	stored := map[string]string{}
	for _, f := range dumps {
		rel, _ := filepath.Rel(root, f)
		if data, err := os.ReadFile(f); err != nil || strings.Contains(string(data), "kind: KubeSchedulerConfiguration") {
			continue // a configuration, not objects
		} else if strings.HasPrefix(strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(string(data), "")), "verb:") {
			continue // a sweep's study (docs/sweep.md), not objects
		}
		objs, err := snapshot.ReadObjects([]string{f}, nil)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		kinds := map[string]int{}
		for _, o := range objs {
			kinds[o.Kind()]++
		}
		cfg := []string{}
		if strings.Contains(rel, "gang") {
			cfg = []string{"--config", filepath.Join(root, "testdata", "gang", "config.yaml")}
		}
		if kinds["Workload"] > 0 {
			// The Workload API is read with its gate only (docs/workloads.md).
			cfg = append(cfg, "--feature-gates", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true")
		}
		workloads := kinds["Deployment"] + kinds["ReplicaSet"] + kinds["StatefulSet"] + kinds["Job"] + kinds["DaemonSet"] + kinds["PodGroup"]
		var args func(file string) []string
		switch {
		case kinds["Node"] == 1 && len(objs) == 1:
			args = func(file string) []string {
				return []string{"capacity", "-f", web, "--snapshot", example, "--add-nodes", "3", "--node-template", file, "-o", "json"}
			}
		case kinds["Node"] == 0 && workloads > 0:
			args = func(file string) []string {
				return append([]string{"capacity", "-f", file, "--snapshot", example, "-o", "json"}, cfg...)
			}
		case kinds["Node"] == 0:
			// Pods to add, as to a dry-run of the example cluster.
			args = func(file string) []string {
				return append([]string{"dryrun", "-f", example, "-f", file, "-o", "json"}, cfg...)
			}
		default:
			args = func(file string) []string { return append([]string{"dryrun", "-f", file, "-o", "json"}, cfg...) }
		}
		stored[rel] = filepath.Join(storedDir, strings.ReplaceAll(filepath.ToSlash(rel), "/", "_")+".json")
		t.Run(rel, func(t *testing.T) {
			stored := stored[rel]
			kept := r.roundTrip(ctx, t, objs, stored, knownInvalid[filepath.ToSlash(rel)], kinds["Node"] == 0 && workloads > 0)
			if len(kept) > 0 {
				t.Logf("kept as written (not served): %s", strings.Join(kept, ", "))
			}
			want := decisions(t, args(f))
			got := decisions(t, args(stored))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decisions as written and after the API server differ (-written +stored):\n%s", diff)
			}
		})
		checked++
	}
	if checked < 15 {
		t.Errorf("checked %d inputs, want every example and golden input", checked)
	}

	// A dump of a cluster is already defaulted: loading it changes
	// nothing. The objects of three inputs, as the API server stored them,
	// are created for real and dumped with `snapshot -A`.
	t.Run("a cluster's dump is unchanged by defaulting", func(t *testing.T) {
		var rcs []*nodev1.RuntimeClass
		for _, rel := range []string{"examples/cluster.yaml", "examples/dra.yaml", "test/e2e/testdata/defaulting.yaml"} {
			objs, err := snapshot.ReadObjects([]string{stored[rel]}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				r.createForReal(ctx, t, o)
			}
		}
		dump := filepath.Join(t.TempDir(), "dump.json")
		var out, errOut bytes.Buffer
		if code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, cli.Settings{},
			[]string{"snapshot", "-A", "--kubeconfig", c.Kubeconfig, "--output-file", dump}); code != 0 {
			t.Fatalf("snapshot: exit %d: %s", code, errOut.String())
		}
		objs, err := snapshot.ReadObjects([]string{dump}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.Kind() == "RuntimeClass" {
				rc := &nodev1.RuntimeClass{}
				if err := o.Decode(rc); err != nil {
					t.Fatal(err)
				}
				rcs = append(rcs, rc)
			}
		}
		kinds := map[string]int{}
		for _, o := range objs {
			typed := newTypedFor(o.Kind())
			if typed == nil {
				continue
			}
			if err := o.Decode(typed); err != nil {
				t.Fatal(err)
			}
			was := reflect.ValueOf(typed).Elem().Interface()
			defaults.Object(typed)
			if p, ok := typed.(*v1.Pod); ok {
				if w := snapshot.AdmitRuntimeClass(p, rcs); w != "" {
					t.Error(w)
				}
				if err := defaults.ValidatePod(p); err != nil {
					t.Errorf("%s: %v", o.Errorf("").Error(), err)
				}
			}
			if diff := cmp.Diff(was, reflect.ValueOf(typed).Elem().Interface()); diff != "" {
				t.Errorf("%s: defaulting changes it (-dumped +defaulted):\n%s", o.Errorf("").Error(), diff)
			}
			kinds[o.Kind()]++
		}
		for _, k := range []string{"Node", "Pod", "Namespace", "PriorityClass", "RuntimeClass", "ResourceClaim", "ResourceClaimTemplate"} {
			if kinds[k] == 0 {
				t.Errorf("the dump has no %s to check: %v", k, kinds)
			}
		}
		t.Logf("checked %v", kinds)
	})
}

// newTypedFor returns a new object of the type the loader decodes kind
// into, for the kinds defaulting or admission reads or changes; nil for
// others.
func newTypedFor(kind string) any {
	switch kind {
	case "Pod":
		return &v1.Pod{}
	case "Node":
		return &v1.Node{}
	case "Namespace":
		return &v1.Namespace{}
	case "PersistentVolume":
		return &v1.PersistentVolume{}
	case "PersistentVolumeClaim":
		return &v1.PersistentVolumeClaim{}
	case "StorageClass":
		return &storagev1.StorageClass{}
	case "CSIDriver":
		return &storagev1.CSIDriver{}
	case "PriorityClass":
		return &schedulingv1.PriorityClass{}
	case "RuntimeClass":
		return &nodev1.RuntimeClass{}
	case "ResourceClaim":
		return &resourceapi.ResourceClaim{}
	case "ResourceClaimTemplate":
		return &resourceapi.ResourceClaimTemplate{}
	}
	return nil
}

// prioritized reports whether the Priority admission computes o's
// spec.priority from its priorityClassName: pods and kube's PodGroups.
func prioritized(o snapshot.Object) bool {
	return o.Kind() == "Pod" || (o.Kind() == "PodGroup" && strings.HasPrefix(o.APIVersion(), "scheduling.k8s.io/"))
}

// createForReal creates an object the API server answered a dry-run
// create with, for real (what the create sets taken out again; a pod's
// priority and preemptionPolicy without a class, which it refuses given,
// left out).
func (r *roundTripper) createForReal(ctx context.Context, t *testing.T, o snapshot.Object) {
	t.Helper()
	u := &unstructured.Unstructured{Object: deepCopy(o.Data)}
	gvk := u.GroupVersionKind()
	m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return // not served
	}
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "generation"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if o.Kind() == "Service" {
		// The dry-run's allocation.
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	}
	if class, _, _ := unstructured.NestedString(u.Object, "spec", "priorityClassName"); prioritized(o) && class == "" {
		unstructured.RemoveNestedField(u.Object, "spec", "priority")
		unstructured.RemoveNestedField(u.Object, "spec", "preemptionPolicy")
	}
	var res dynamic.ResourceInterface = r.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		res = r.dyn.Resource(m.Resource).Namespace(u.GetNamespace())
	}
	if _, err := res.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("%s: %v", o.Errorf("create").Error(), err)
	}
}

// knownInvalid are inputs the API server refuses objects of for reasons
// unrelated to defaulting: those objects are kept as written.
var knownInvalid = map[string][]string{
	// internal/gen names MIG devices "gpu-0-mig-3g.20gb-0" ("must not
	// contain dots"), and gives hostNetwork pods hostUsers: false
	// ("Forbidden: when `hostUsers` is false"); the recorded kube
	// answers are of those objects.
	"testdata/conformance/dra-small/snapshot.json":  {"ResourceSlice", "Pod"},
	"testdata/conformance/dra-medium/snapshot.json": {"ResourceSlice", "Pod"},
}

// decisions runs the CLI and returns its JSON output without the timings.
func decisions(t *testing.T, args []string) map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, cli.Settings{}, args); code != 0 {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	var m map[string]any
	if err := json.Unmarshal(templateHash.ReplaceAll(out.Bytes(), []byte("${1}-HASH-capacity-")), &m); err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	dropTimings(m)
	return m
}

// dropTimings removes what depends on the machine's speed, and the
// sources ("file:line"), which name the two files.
// templateHash finds the pod-template-hash in the names of capacity's
// copies of a Deployment ("web-6bbd5ffb9-capacity-1"). It is a hash of
// the template as stored, which the API server gives every field of its
// defaults, where the engine defaults only the fields a decision reads
// (docs/snapshot.md): the names differ, the decisions must not.
var templateHash = regexp.MustCompile(`([a-z0-9.-]+)-[a-z0-9]{6,10}-capacity-`)

func dropTimings(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			lk := strings.ToLower(k)
			if strings.Contains(lk, "second") || strings.Contains(lk, "duration") || strings.Contains(lk, "persec") || strings.Contains(lk, "time") || lk == "source" {
				delete(x, k)
				continue
			}
			dropTimings(e)
		}
	case []any:
		for _, e := range x {
			dropTimings(e)
		}
	}
}

type roundTripper struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	// classes are the PriorityClasses and RuntimeClasses the last file
	// created.
	classes []created
}

type created struct {
	gvr  schema.GroupVersionResource
	name string
}

// resetStatus are the kinds whose create resets the status a dump holds.
var resetStatus = map[string]bool{"Pod": true, "PersistentVolume": true, "PersistentVolumeClaim": true, "ResourceClaim": true}

// roundTrip puts objs through the API server (see TestDefaultingAsTheAPIServer)
// and writes what it returns as one List to path. It returns the kinds kept
// as written.
func (r *roundTripper) roundTrip(ctx context.Context, t *testing.T, objs []snapshot.Object, path string, invalidKinds []string, specs bool) (kept []string) {
	t.Helper()
	read := map[string]bool{}
	for _, k := range snapshot.Kinds {
		read[k.Kind] = true
	}
	for _, c := range r.classes {
		if err := r.dyn.Resource(c.gvr).Delete(ctx, c.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	r.classes = nil
	rcGVR := schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}
	// A RuntimeClass the pods name and the input lacks (generated dumps
	// carry the overhead without the class) is made with their overhead.
	runtimeClasses := map[string]bool{}
	for _, o := range objs {
		if o.Kind() == "RuntimeClass" {
			runtimeClasses[o.Name()] = true
		}
	}
	// Likewise a PriorityClass pods name and the input lacks, with their
	// priority.
	pcGVR := schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
	priorityClasses := map[string]bool{}
	for _, o := range objs {
		if o.Kind() == "PriorityClass" {
			priorityClasses[o.Name()] = true
		}
	}
	for _, o := range objs {
		name, _, _ := unstructured.NestedString(o.Data, "spec", "priorityClassName")
		value, ok := nestedInt(o.Data, "spec", "priority")
		if o.Kind() != "Pod" || name == "" || strings.HasPrefix(name, "system-") || priorityClasses[name] || !ok {
			continue
		}
		pc := map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": name}, "value": value}
		if _, err := r.dyn.Resource(pcGVR).Create(ctx, &unstructured.Unstructured{Object: pc}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating PriorityClass %s for the pods naming it: %v", name, err)
		}
		r.classes = append(r.classes, created{pcGVR, name})
		priorityClasses[name] = true
		t.Logf("PriorityClass %s: not in the input, made from pod %s/%s's priority", name, o.Namespace(), o.Name())
	}
	for _, o := range objs {
		name, _, _ := unstructured.NestedString(o.Data, "spec", "runtimeClassName")
		if o.Kind() != "Pod" || name == "" || runtimeClasses[name] {
			continue
		}
		rc := map[string]any{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": map[string]any{"name": name}, "handler": name}
		if oh, ok, _ := unstructured.NestedMap(o.Data, "spec", "overhead"); ok {
			rc["overhead"] = map[string]any{"podFixed": oh}
		}
		if _, err := r.dyn.Resource(rcGVR).Create(ctx, &unstructured.Unstructured{Object: rc}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating RuntimeClass %s for the pods naming it: %v", name, err)
		}
		r.classes = append(r.classes, created{rcGVR, name})
		runtimeClasses[name] = true
		t.Logf("RuntimeClass %s: not in the input, made from pod %s/%s's overhead", name, o.Namespace(), o.Name())
	}
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	namespaces := map[string]bool{"default": true}
	var items []any
	seenKept := map[string]bool{}
	// Namespaces and PriorityClasses first: admission reads them.
	sort.SliceStable(objs, func(i, j int) bool { return rank(objs[i].Kind()) < rank(objs[j].Kind()) })
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: deepCopy(o.Data)}
		gvk := u.GroupVersionKind()
		if !read[gvk.Kind] && !specs {
			// Not read by the loader (a Deployment in a dump): it makes
			// no decision, as written or not.
			items = append(items, o.Data)
			continue
		}
		m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			if !meta.IsNoMatchError(err) {
				t.Fatalf("%s: %v", o.Errorf("mapping").Error(), err)
			}
			if !seenKept[u.GetAPIVersion()+" "+u.GetKind()] {
				seenKept[u.GetAPIVersion()+" "+u.GetKind()] = true
				kept = append(kept, u.GetAPIVersion()+" "+u.GetKind())
			}
			items = append(items, o.Data)
			continue
		}
		in := u.DeepCopy()
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "generation"} {
			unstructured.RemoveNestedField(in.Object, "metadata", f)
		}
		// A pod's (or a scheduling.k8s.io PodGroup's) priority and
		// preemptionPolicy without a class are the Priority admission's
		// answer for a class the dump lacks (or, in a transcription of
		// kube's tests and the generated gang clusters, fields set
		// directly): the API server refuses them given; they are put back
		// after.
		priority, hasPriority := nestedInt(in.Object, "spec", "priority")
		policy, hasPolicy, _ := unstructured.NestedString(in.Object, "spec", "preemptionPolicy")
		if class, _, _ := unstructured.NestedString(in.Object, "spec", "priorityClassName"); prioritized(o) && class == "" {
			unstructured.RemoveNestedField(in.Object, "spec", "priority")
			unstructured.RemoveNestedField(in.Object, "spec", "preemptionPolicy")
		} else {
			hasPriority, hasPolicy = false, false
		}
		var res dynamic.ResourceInterface = r.dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := in.GetNamespace()
			if ns == "" {
				ns = "default"
				in.SetNamespace(ns)
			}
			if !namespaces[ns] {
				if _, err := r.dyn.Resource(nsGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
				namespaces[ns] = true
			}
			res = r.dyn.Resource(m.Resource).Namespace(ns)
		}
		var out *unstructured.Unstructured
		switch o.Kind() {
		case "Namespace":
			// Created for real (objects of it need it), or given the
			// file's labels.
			out, err = res.Create(ctx, in, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				var cur *unstructured.Unstructured
				if cur, err = res.Get(ctx, in.GetName(), metav1.GetOptions{}); err == nil {
					cur.SetLabels(in.GetLabels())
					out, err = res.Update(ctx, cur, metav1.UpdateOptions{})
				}
			}
			namespaces[in.GetName()] = true
		case "PriorityClass", "RuntimeClass":
			// Created for real: admission reads them.
			if strings.HasPrefix(in.GetName(), "system-") {
				out, err = res.Get(ctx, in.GetName(), metav1.GetOptions{})
				break
			}
			out, err = res.Create(ctx, in, metav1.CreateOptions{})
			r.classes = append(r.classes, created{m.Resource, in.GetName()})
		default:
			out, err = res.Create(ctx, in, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		}
		if err != nil && apierrors.IsInvalid(err) && slices.Contains(invalidKinds, o.Kind()) {
			t.Logf("%s: kept as written: %v", o.Errorf("create").Error(), err)
			items = append(items, o.Data)
			continue
		}
		if err != nil {
			t.Fatalf("%s: the API server refuses it: %v", o.Errorf("create").Error(), err)
		}
		if hasPriority {
			if err := unstructured.SetNestedField(out.Object, priority, "spec", "priority"); err != nil {
				t.Fatal(err)
			}
		}
		if hasPolicy {
			if err := unstructured.SetNestedField(out.Object, policy, "spec", "preemptionPolicy"); err != nil {
				t.Fatal(err)
			}
		}
		// What a dump keeps of the object's life, from the file.
		md := out.Object["metadata"].(map[string]any)
		delete(md, "managedFields")
		written, _ := o.Data["metadata"].(map[string]any)
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
			if v, ok := written[f]; ok {
				md[f] = v
			} else {
				delete(md, f)
			}
		}
		if resetStatus[o.Kind()] {
			if st, ok := o.Data["status"]; ok {
				out.Object["status"] = deepCopy(map[string]any{"s": st})["s"]
			} else {
				delete(out.Object, "status")
			}
		}
		items = append(items, out.Object)
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return kept
}

// nestedInt reads a number of a decoded manifest (JSON numbers are
// float64 there).
func nestedInt(obj map[string]any, fields ...string) (int64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	switch n := v.(type) {
	case int64:
		return n, ok
	case float64:
		return int64(n), ok
	}
	return 0, false
}

func rank(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "PriorityClass", "RuntimeClass":
		return 1
	}
	return 2
}

func deepCopy(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}
