package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

const deployDir = "../../deploy"

// serviceAccount is who deploy/ runs the scheduler as.
const serviceAccount = "system:serviceaccount:kubectl-sched:kubectl-sched"

// TestDeployManifestsAreAcceptedAndTheirRBACSuffices applies deploy/ to the
// cluster (there is no kubelet, so the Deployment's pods never run), then
// runs `kubectl sched run` with the ConfigMap's configuration, impersonating
// the ServiceAccount: it must sync every informer, take its Lease, bind a
// pod, set an unschedulable pod's condition and record both events, with no
// request forbidden; and the ServiceAccount must not be able to do more.
func TestDeployManifestsAreAcceptedAndTheirRBACSuffices(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	config := applyDeploy(ctx, t, c.Client)

	const group = "run-rbac"
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "run-rbac-a", Zone: "zone-a", CPU: "2", Memory: "8Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-rbac")
	createPods(ctx, t, c.Client, ns, ourPod("fits", "1", "kubectl-sched", group), ourPod("too-big", "4", "kubectl-sched", group))

	// klog's output, to find any request the ServiceAccount was refused.
	var logs lockedBuffer
	klog.LogToStderr(false)
	klog.SetOutput(&logs)
	defer func() {
		klog.SetOutput(os.Stderr)
		klog.LogToStderr(true)
	}()
	runCtx, stop := context.WithCancel(ctx)
	var stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stderr, ErrOut: &stderr}
		code <- cli.ExecuteContext(runCtx, streams, cli.Settings{}, []string{"run",
			"--config", config, "--kubeconfig", c.Kubeconfig, "--as", serviceAccount,
			"--metrics-bind-address", "0", "--v", "2"})
	}()
	defer stop()

	got := waitForPod(ctx, t, c.Client, ns, "fits", bound)
	if got.Spec.NodeName != "run-rbac-a" {
		t.Errorf("fits bound to %s", got.Spec.NodeName)
	}
	waitForEvent(ctx, t, c.Client, ns, "fits", "Scheduled")
	waitForPod(ctx, t, c.Client, ns, "too-big", unschedulable)
	waitForEvent(ctx, t, c.Client, ns, "too-big", "FailedScheduling")
	lease, err := c.Client.CoordinationV1().Leases("kubectl-sched").Get(ctx, "kubectl-sched", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("lease kubectl-sched/kubectl-sched: %v %+v", err, lease)
	}

	stop()
	select {
	case got := <-code:
		if got != 0 {
			t.Errorf("run exited %d: %s", got, stderr.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatal("run did not stop")
	}
	klog.Flush()
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "forbidden") || strings.Contains(line, "Forbidden") {
			t.Errorf("a request was forbidden: %s", line)
		}
	}

	// Least privilege: what the ServiceAccount may and may not do.
	as := rest.CopyConfig(c.Config)
	as.Impersonate = rest.ImpersonationConfig{UserName: serviceAccount}
	sa, err := kubernetes.NewForConfig(as)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ra      authorizationv1.ResourceAttributes
		allowed bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Subresource: "binding", Namespace: ns}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "pods", Subresource: "status", Namespace: ns}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Resource: "nodes"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "events.k8s.io", Resource: "events", Namespace: ns}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kubectl-sched", Name: "kubectl-sched"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kubectl-sched", Name: "someone-else"}, false},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "kube-scheduler"}, false},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: ns}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "policy", Resource: "poddisruptionbudgets", Namespace: ns}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Resource: "pods", Namespace: ns}, false},
		// A binding whose answer was lost is resolved by reading the pod.
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: ns}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "nodes"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Subresource: "eviction", Namespace: ns}, false},
	} {
		ra := tt.ra
		r, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != tt.allowed {
			t.Errorf("%s %s/%s %s/%s: allowed=%v, want %v", ra.Verb, ra.Group, ra.Resource, ra.Namespace, ra.Name+ra.Subresource, r.Status.Allowed, tt.allowed)
		}
	}
}

// applyDeploy creates every object of deploy/ and returns the path of the
// ConfigMap's configuration written to a file.
func applyDeploy(ctx context.Context, t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", deployDir, err)
	}
	var objs []runtime.Object
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		for {
			doc, err := r.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			objs = append(objs, obj)
		}
	}
	// The namespace first.
	for i, o := range objs {
		if _, ok := o.(*v1.Namespace); ok {
			objs[0], objs[i] = objs[i], objs[0]
		}
	}
	var config string
	opts := metav1.CreateOptions{FieldValidation: "Strict"}
	for _, o := range objs {
		var err error
		switch x := o.(type) {
		case *v1.Namespace:
			_, err = client.CoreV1().Namespaces().Create(ctx, x, opts)
			t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), x.Name, metav1.DeleteOptions{}) })
		case *v1.ServiceAccount:
			_, err = client.CoreV1().ServiceAccounts(x.Namespace).Create(ctx, x, opts)
		case *v1.ConfigMap:
			_, err = client.CoreV1().ConfigMaps(x.Namespace).Create(ctx, x, opts)
			config = filepath.Join(t.TempDir(), "config.yaml")
			if werr := os.WriteFile(config, []byte(x.Data["config.yaml"]), 0o600); werr != nil {
				t.Fatal(werr)
			}
		case *v1.Service:
			_, err = client.CoreV1().Services(x.Namespace).Create(ctx, x, opts)
		case *appsv1.Deployment:
			_, err = client.AppsV1().Deployments(x.Namespace).Create(ctx, x, opts)
		case *rbacv1.ClusterRole:
			_, err = client.RbacV1().ClusterRoles().Create(ctx, x, opts)
			t.Cleanup(func() {
				_ = client.RbacV1().ClusterRoles().Delete(context.Background(), x.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.ClusterRoleBinding:
			_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, x, opts)
			t.Cleanup(func() {
				_ = client.RbacV1().ClusterRoleBindings().Delete(context.Background(), x.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.Role:
			_, err = client.RbacV1().Roles(x.Namespace).Create(ctx, x, opts)
		case *rbacv1.RoleBinding:
			_, err = client.RbacV1().RoleBindings(x.Namespace).Create(ctx, x, opts)
		default:
			t.Fatalf("deploy/ has a %T the test does not apply", o)
		}
		if err != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
	if config == "" {
		t.Fatal("deploy/ has no ConfigMap")
	}
	return config
}

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of klog
// and the command.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
