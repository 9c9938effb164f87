package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// defaultSchedulerConfig is used when StartScheduler gets no config: the
// default profile, with client limits high enough not to be the bottleneck.
const defaultSchedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 1000
  burst: 1000
`

// StartScheduler runs the real kube-scheduler against the cluster and waits
// until it is ready (its informers synced). configPath names a
// KubeSchedulerConfiguration; empty means the default profile. The harness
// points clientConnection.kubeconfig at the admin kubeconfig and turns leader
// election off, in a copy of the file, since kube-scheduler ignores
// --kubeconfig when --config is given. Cluster.Stop stops it too; so does
// Process.Stop.
func (c *Cluster) StartScheduler(ctx context.Context, configPath string) (*Process, error) {
	raw := []byte(defaultSchedulerConfig)
	if configPath != "" {
		b, err := os.ReadFile(configPath)
		if err != nil {
			return nil, fmt.Errorf("reading scheduler config: %w", err)
		}
		raw = b
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("parsing scheduler config %q: %w", configPath, err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	setDefault(cfg, "apiVersion", "kubescheduler.config.k8s.io/v1")
	setDefault(cfg, "kind", "KubeSchedulerConfiguration")
	sub(cfg, "clientConnection")["kubeconfig"] = c.Kubeconfig
	sub(cfg, "leaderElection")["leaderElect"] = false
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	n := c.nSched + 1
	c.mu.Unlock()
	cfgFile := filepath.Join(c.StateDir, fmt.Sprintf("kube-scheduler-%d.yaml", n))
	if err := os.WriteFile(cfgFile, out, 0o644); err != nil {
		return nil, err
	}
	certDir := filepath.Join(c.StateDir, fmt.Sprintf("kube-scheduler-%d-certs", n))
	if err := os.MkdirAll(certDir, 0o755); err != nil {
		return nil, err
	}

	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		p, err := c.run(SchedulerBinary, append([]string{
			"--config=" + cfgFile,
			"--authentication-kubeconfig=" + c.Kubeconfig,
			"--authorization-kubeconfig=" + c.Kubeconfig,
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--cert-dir=" + certDir,
			"--v=2",
		}, c.schedArgs...))
		if err != nil {
			return nil, err
		}
		// Its serving certificate is self-signed; /readyz needs no auth.
		httpc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, self-signed
		readyCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		lastErr = waitReady(readyCtx, p, fmt.Sprintf("https://127.0.0.1:%d/readyz", ports[0]), httpc)
		cancel()
		httpc.CloseIdleConnections()
		if lastErr == nil {
			p.Port = ports[0]
			return p, nil
		}
		p.Stop(5 * time.Second)
		if ctx.Err() != nil || !containsAddrInUse(lastErr) {
			break
		}
	}
	return nil, fmt.Errorf("starting kube-scheduler: %w", lastErr)
}

func containsAddrInUse(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// sub returns m[k] as a map, creating it if absent.
func sub(m map[string]any, k string) map[string]any {
	if s, ok := m[k].(map[string]any); ok {
		return s
	}
	s := map[string]any{}
	m[k] = s
	return s
}
