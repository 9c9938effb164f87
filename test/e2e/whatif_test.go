package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// readOnlyUser may get, list and watch everything and nothing else; the
// what-if verbs run as it (impersonated with --as).
const readOnlyUser = "e2e-readonly"

// TestWhatIfLiveIsReadOnly runs `capacity` and `drain` against a real
// kube-apiserver as a user whose RBAC allows only get, list and watch, and
// reads the API server's audit log: the user made requests, none of them a
// write. Then, as admin, it asks the eviction subresource for the evictions
// the drain predicted, in the same order, and checks that the API server
// allows exactly the ones drain said it would, refusing the others with the
// code, message and cause drain gave.
func TestWhatIfLiveIsReadOnly(t *testing.T) {
	if cluster.Disabled() {
		t.Skipf("%s=0: end-to-end tests are off", cluster.EnvE2E)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.log")
	c := cluster.StartForTest(t, cluster.Options{ExtraAPIServerArgs: []string{
		"--audit-policy-file=" + policy, "--audit-log-path=" + auditLog, "--audit-log-mode=blocking"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := c.Client
	grantReadOnly(ctx, t, client)

	specs := []cluster.NodeSpec{
		{Name: "old-1", Zone: "zone-a", CPU: "8", Memory: "32Gi"},
		{Name: "old-2", Zone: "zone-a", CPU: "8", Memory: "32Gi"},
		{Name: "new-1", Zone: "zone-b", CPU: "4", Memory: "16Gi"},
		{Name: "new-2", Zone: "zone-b", CPU: "2", Memory: "8Gi"},
	}
	if err := cluster.CreateNodes(ctx, client, cluster.Nodes(specs)); err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(ctx, t, client, "whatif")
	web, db := map[string]string{"app": "web"}, map[string]string{"app": "db"}
	pods := []*v1.Pod{
		boundPod("web-1", "old-1", "1", web, "ReplicaSet", true),
		boundPod("web-2", "old-1", "1", web, "ReplicaSet", true),
		boundPod("web-3", "old-2", "1", web, "ReplicaSet", true),
		boundPod("db-0", "old-1", "1", db, "StatefulSet", true),
		boundPod("db-1", "old-2", "1", db, "StatefulSet", true),
		boundPod("cache-0", "old-2", "500m", map[string]string{"app": "cache"}, "StatefulSet", false), // not ready
		boundPod("both-0", "old-2", "500m", map[string]string{"app": "both"}, "ReplicaSet", true),
		boundPod("fresh-0", "old-2", "500m", map[string]string{"app": "fresh"}, "ReplicaSet", true),
		boundPod("agent-old-1", "old-1", "100m", map[string]string{"app": "agent"}, "DaemonSet", true),
	}
	for _, p := range pods {
		created, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = p.Status
		if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Budgets with the status a disruption controller would keep (none
	// runs here): web may lose one pod, db none, cache (unready pod,
	// healthy application) none, "both" is selected by two budgets, and
	// "fresh"'s budget has not been processed yet.
	budgets := []struct {
		name     string
		selector map[string]string
		status   policyv1.PodDisruptionBudgetStatus
		process  bool
	}{
		{"web", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3}, true},
		{"db", db, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}, true},
		{"cache", map[string]string{"app": "cache"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 2}, true},
		{"both-a", map[string]string{"app": "both"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 1, ExpectedPods: 1}, true},
		{"both-b", map[string]string{"app": "both"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 1, ExpectedPods: 1}, true},
		{"fresh", map[string]string{"app": "fresh"}, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 1, ExpectedPods: 1}, false},
	}
	for _, b := range budgets {
		pdb, err := client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: b.name},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: b.selector}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pdb.Status = b.status
		if b.process {
			pdb.Status.ObservedGeneration = pdb.Generation
		}
		if _, err := client.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	spec := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(spec, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: more, namespace: "+ns+"}\nspec:\n  selector: {matchLabels: {app: more}}\n  template:\n    metadata: {labels: {app: more}}\n    spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	asReader := func(args ...string) (int, string, string) {
		return sched(t, c, append(args, "--as", readOnlyUser)...)
	}

	// capacity, live and from a dump the same user takes: the same answer.
	code, live, stderr := asReader("capacity", "-f", spec, "-o", "json")
	if code != 0 {
		t.Fatalf("capacity: exit %d: %s", code, stderr)
	}
	code, dump, stderr := asReader("snapshot", "-A")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, stderr)
	}
	dumpFile := filepath.Join(dir, "dump.yaml")
	if err := os.WriteFile(dumpFile, []byte(dump), 0o600); err != nil {
		t.Fatal(err)
	}
	_, offline, _ := sched(t, c, "capacity", "-f", spec, "--snapshot", dumpFile, "-o", "json")
	var lc, oc report.Capacity
	if err := json.Unmarshal([]byte(live), &lc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(offline), &oc); err != nil {
		t.Fatal(err)
	}
	if lc.Source != "cluster" || lc.Specs[0].Count == 0 {
		t.Errorf("live capacity: %+v", lc)
	}
	oc.Source = lc.Source
	if d := cmp.Diff(oc, lc); d != "" {
		t.Errorf("capacity live vs from a dump (-dump +live):\n%s", d)
	}

	code, out, stderr := asReader("drain", "old-1", "old-2", "-o", "json")
	if code != 3 {
		t.Fatalf("drain: exit %d, want 3 (budgets refuse evictions): %s", code, stderr)
	}
	var d report.Drain
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Source != "cluster" || len(d.Stay) != 1 || d.Stay[0].Pod != ns+"/agent-old-1" {
		t.Errorf("drain: source %s, stay %+v", d.Source, d.Stay)
	}

	// The audit log: the reader's requests, all reads.
	verbs := readerVerbs(t, auditLog)
	if verbs["list"] == 0 {
		t.Errorf("the audit log has no list by %s: %v", readOnlyUser, verbs)
	}
	for v, n := range verbs {
		if v != "get" && v != "list" && v != "watch" {
			t.Errorf("%s made %d %q requests; the what-if verbs must only read", readOnlyUser, n, v)
		}
	}

	// The API server's own answers to the evictions drain predicted, asked
	// in drain's order (kubectl's: node by node, pods by name).
	predicted := map[string]string{}
	for _, m := range d.Moves {
		predicted[m.Pod] = "evicted"
	}
	for _, r := range d.Refused {
		predicted[r.Pod] = refusalKey(r.Code, r.Message, r.Cause)
	}
	var order []string
	for _, node := range []string{"old-1", "old-2"} {
		var names []string
		for _, p := range pods {
			if p.Spec.NodeName == node && p.OwnerReferences[0].Kind != "DaemonSet" {
				names = append(names, p.Name)
			}
		}
		sort.Strings(names)
		order = append(order, names...)
	}
	got := map[string]string{}
	for _, name := range order {
		err := client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
		key := ns + "/" + name
		var se *apierrors.StatusError
		switch {
		case err == nil:
			got[key] = "evicted"
		case errors.As(err, &se):
			cause := ""
			if det := se.ErrStatus.Details; det != nil {
				for _, c := range det.Causes {
					if c.Type == policyv1.DisruptionBudgetCause {
						cause = c.Message
					}
				}
			}
			got[key] = refusalKey(int(se.ErrStatus.Code), se.ErrStatus.Message, cause)
		default:
			t.Fatalf("evicting %s: %v", key, err)
		}
	}
	t.Logf("apiserver answers: %v; reader verbs %v", got, verbs)
	if diff := cmp.Diff(predicted, got); diff != "" {
		t.Errorf("drain's predictions vs the API server's answers (-drain +apiserver):\n%s", diff)
	}
	if len(d.Refused) < 4 {
		t.Errorf("refused = %+v; the scenario has a budget at zero, one used up, one shared and one unprocessed", d.Refused)
	}
}

func refusalKey(code int, msg, cause string) string {
	return strings.Join([]string{"refused", strconv.Itoa(code), msg, cause}, " | ")
}

// grantReadOnly lets readOnlyUser get, list and watch everything.
func grantReadOnly(ctx context.Context, t *testing.T, client kubernetes.Interface) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-read-only"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-read-only"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: readOnlyUser}}}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// boundPod is a pod already on a node, owned by a controller of kind, with
// a Running status (Ready or not).
func boundPod(name, node, cpu string, labels map[string]string, kind string, ready bool) *v1.Pod {
	p := makePod(name, cpu, nil)
	p.Labels = labels
	p.Spec.NodeName = node
	apiVersion := "apps/v1"
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name + "-owner", UID: types.UID("uid-" + name), Controller: ptr.To(true)}}
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	p.Status = v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: status}}}
	return p
}

// readerVerbs counts the verbs of the audit log's requests made as
// readOnlyUser (impersonated by the admin).
func readerVerbs(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Stage            string `json:"stage"`
			Verb             string `json:"verb"`
			ImpersonatedUser *struct {
				Username string `json:"username"`
			} `json:"impersonatedUser"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username == readOnlyUser && ev.Stage == "ResponseComplete" {
			out[ev.Verb]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
