package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestPKIServingCertVerifiesForLoopbackAndAdminIsSystemMasters(t *testing.T) {
	p, err := newPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CAData) {
		t.Fatal("CA PEM does not parse")
	}
	serving := readCert(t, p.CertFile)
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("serving cert for %s: %v", host, err)
		}
	}
	if _, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile); err != nil {
		t.Errorf("serving key pair: %v", err)
	}
	admin := readCert(t, p.AdminCertFile)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin cert: %v", err)
	}
	if diff := cmp.Diff([]string{"system:masters"}, admin.Subject.Organization); diff != "" {
		t.Errorf("admin groups (-want +got):\n%s", diff)
	}
	for _, f := range []string{p.SAKeyFile, p.SAPublicKeyFile} {
		if b, _ := os.ReadFile(f); len(b) == 0 {
			t.Errorf("%s is empty", f)
		}
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGenerateNodesIsDeterministicAndSpreadsZones(t *testing.T) {
	a := GenerateNodes(30, GenerateOptions{Seed: 7})
	b := GenerateNodes(30, GenerateOptions{Seed: 7})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different nodes (-a +b):\n%s", diff)
	}
	perZone := map[string]int{}
	types := map[string]bool{}
	for _, s := range a {
		perZone[s.Zone]++
		types[s.InstanceType] = true
	}
	if diff := cmp.Diff(map[string]int{"us-east-1a": 10, "us-east-1b": 10, "us-east-1c": 10}, perZone); diff != "" {
		t.Errorf("nodes per zone (-want +got):\n%s", diff)
	}
	if len(types) < 3 {
		t.Errorf("only %d instance types in 30 nodes: %v", len(types), types)
	}
	if a[0].Name != "node-0000" || a[29].Name != "node-0029" {
		t.Errorf("names %s..%s; want node-0000..node-0029", a[0].Name, a[29].Name)
	}
}

func TestNodeSpecNodeHasReadyStatusAndKubeletLikeAllocatable(t *testing.T) {
	n := NodeSpec{Name: "n1", Zone: "z1", InstanceType: "m5.xlarge", CPU: "4", Memory: "16Gi"}.Node()
	if got := n.Labels[v1.LabelTopologyZone]; got != "z1" {
		t.Errorf("zone label %q; want z1", got)
	}
	if got := n.Labels[v1.LabelHostname]; got != "n1" {
		t.Errorf("hostname label %q; want n1", got)
	}
	if got := n.Status.Allocatable.Cpu().MilliValue(); got != 3900 {
		t.Errorf("allocatable cpu %dm; want 3900m", got)
	}
	if got, want := n.Status.Allocatable.Memory().Value(), int64(16<<30-(16<<30)/20); got != want {
		t.Errorf("allocatable memory %d; want %d", got, want)
	}
	if got := n.Status.Allocatable.Pods().Value(); got != 110 {
		t.Errorf("allocatable pods %d; want 110", got)
	}
	if n.Status.Conditions[0].Type != v1.NodeReady || n.Status.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("first condition %+v; want Ready=True", n.Status.Conditions[0])
	}
}

// TestStartStop runs the real control plane: it starts, serves the admin
// kubeconfig, takes fake nodes in bulk, and Stop (twice) leaves no process or
// directory behind.
func TestStartStop(t *testing.T) {
	if Disabled() {
		t.Skipf("%s=0", EnvE2E)
	}
	start := time.Now()
	c, err := Start(context.Background(), Options{Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	t.Logf("cluster ready in %v", time.Since(start).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version through the kubeconfig: %v", err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Errorf("server version %s; want v1.37.2", v.GitVersion)
	}

	start = time.Now()
	const n = 200
	if err := CreateNodes(ctx, c.Client, Nodes(GenerateNodes(n, GenerateOptions{Seed: 1}))); err != nil {
		t.Fatal(err)
	}
	t.Logf("created %d nodes with status in %v", n, time.Since(start).Round(time.Millisecond))
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != n {
		t.Errorf("listed %d nodes; want %d", len(nodes.Items), n)
	}
	for _, node := range nodes.Items {
		if node.Status.Allocatable.Cpu().IsZero() || len(node.Status.Conditions) == 0 {
			t.Fatalf("node %s has no status: %+v", node.Name, node.Status)
		}
	}

	procs := c.Processes()
	start = time.Now()
	c.Stop()
	c.Stop()
	t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
	for _, p := range procs {
		select {
		case <-p.Exited():
		default:
			t.Errorf("%s (pid %d) still running after Stop", p.Name, p.Pid())
		}
	}
	if _, err := os.Stat(c.StateDir); !os.IsNotExist(err) {
		t.Errorf("state dir %s still there after Stop (%v)", c.StateDir, err)
	}
}
