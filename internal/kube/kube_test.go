package kube

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes/fake"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443"}
- name: b
  cluster: {server: "https://b.example:6443"}
contexts:
- name: a
  context: {cluster: a}
- name: b
  context: {cluster: b}
current-context: a
`

func TestRESTConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := func(context string) *genericclioptions.ConfigFlags {
		f := genericclioptions.NewConfigFlags(false)
		f.KubeConfig = &path
		if context != "" {
			f.Context = &context
		}
		return f
	}
	tests := []struct {
		name      string
		flags     *genericclioptions.ConfigFlags
		qps       float32
		burst     int32
		wantHost  string
		wantQPS   float32
		wantBurst int
	}{
		{"the current context with clientConnection's limits", flags(""), 50, 100, "https://a.example:6443", 50, 100},
		{"--context picks another cluster", flags("b"), 1000, 1000, "https://b.example:6443", 1000, 1000},
		{"zero limits keep client-go's defaults", flags(""), 0, 0, "https://a.example:6443", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := RESTConfig(tt.flags, tt.qps, tt.burst)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost || cfg.QPS != tt.wantQPS || cfg.Burst != tt.wantBurst {
				t.Errorf("host %s qps %v burst %d, want %s %v %d", cfg.Host, cfg.QPS, cfg.Burst, tt.wantHost, tt.wantQPS, tt.wantBurst)
			}
			if !strings.HasPrefix(cfg.UserAgent, UserAgent+"/") {
				t.Errorf("user agent %q", cfg.UserAgent)
			}
		})
	}
}

func TestRESTConfigNamesAMissingKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	f := genericclioptions.NewConfigFlags(false)
	f.KubeConfig = &missing
	if _, err := RESTConfig(f, 0, 0); err == nil || !strings.Contains(err.Error(), "loading kubeconfig") {
		t.Errorf("err = %v, want loading kubeconfig: ...", err)
	}
}

// TestNoKubeconfigAnywhere: with no kubeconfig file to read and no
// --server, ToRESTConfig says so (ErrNoKubeconfig, an ErrKubeconfig)
// rather than falling back to http://localhost:8080; --server alone is
// enough.
func TestNoKubeconfigAnywhere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	// client-go reads ~/.kube/config's path at start-up: KUBECONFIG naming
	// a missing file is "none" as well.
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := ToRESTConfig(genericclioptions.NewConfigFlags(false))
	if !errors.Is(err, ErrNoKubeconfig) || !errors.Is(err, ErrKubeconfig) {
		t.Fatalf("err = %v, want ErrNoKubeconfig and ErrKubeconfig", err)
	}
	want := "loading kubeconfig: no kubeconfig found (KUBECONFIG=" + missing + " names no kubeconfig with a cluster, and not in a pod): pass --kubeconfig FILE, set KUBECONFIG, or give --server URL"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	f := genericclioptions.NewConfigFlags(false)
	server := "https://127.0.0.1:6443"
	f.APIServer = &server
	cfg, err := ToRESTConfig(f)
	if err != nil || cfg.Host != server {
		t.Errorf("with --server: host %v, err %v; want %s", cfg, err, server)
	}
}

// The pod informer is kube-scheduler's: its list leaves out finished pods.
func TestPodInformerSelectsUnfinishedPods(t *testing.T) {
	if PodFieldSelector != "status.phase!=Succeeded,status.phase!=Failed" {
		t.Errorf("PodFieldSelector = %q", PodFieldSelector)
	}
	f := NewInformerFactory(fake.NewClientset(), 0)
	if f.Core().V1().Pods().Informer() == nil {
		t.Fatal("no pod informer")
	}
}
