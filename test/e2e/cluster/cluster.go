package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options tune Start. The zero value is a sensible test cluster.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-scheduler. Empty means
	// EnsureBinaries: build them into the cache if missing.
	BinDir string
	// StateDir receives certificates, the kubeconfig, etcd's data and the
	// logs. Empty means a new temporary directory. Stop removes it either way
	// unless KeepStateDir is set.
	StateDir string
	// KeepStateDir leaves the state directory (logs, data) in place on Stop.
	// The environment variable KUBECTL_SCHED_E2E_KEEP=1 sets it too.
	KeepStateDir bool
	// Progress receives build output and start-up progress; nil discards it.
	Progress io.Writer
	// ExtraAPIServerArgs are appended to kube-apiserver's flags (a later flag
	// wins), e.g. "--feature-gates=...".
	ExtraAPIServerArgs []string
	// ExtraSchedulerArgs are appended to the flags of every kube-scheduler
	// StartScheduler runs, e.g. the feature gates the API server has.
	ExtraSchedulerArgs []string
	// ReadyTimeout bounds the wait for etcd and kube-apiserver to become ready
	// (not the build). Default 90s.
	ReadyTimeout time.Duration
	// QPS and Burst of the returned rest.Config. Default 500 and 1000, so that
	// tests can create thousands of objects quickly.
	QPS   float32
	Burst int
}

// Cluster is a running etcd + kube-apiserver on loopback ports.
type Cluster struct {
	// Kubeconfig is the path of an admin kubeconfig (certificates embedded).
	Kubeconfig string
	// Config is the admin rest.Config.
	Config *rest.Config
	// Client is a clientset for Config.
	Client kubernetes.Interface
	// Host is the apiserver URL, https://127.0.0.1:<port>.
	Host string
	// StateDir holds certificates, data and logs.
	StateDir string
	// BinDir holds the binaries the cluster runs.
	BinDir string

	pki      *pki
	keep     bool
	progress io.Writer
	// apiArgs are kube-apiserver's flags, kept for StartAPIServer;
	// apiserver is the running one (nil while stopped).
	apiArgs      []string
	schedArgs    []string
	apiserver    *Process
	readyTimeout time.Duration

	mu       sync.Mutex
	procs    []*Process // running, in start order
	dead     []*Process // stopped, kept for DumpLogs
	nSched   int
	stopOnce sync.Once
}

const stateDirPrefix = "kubectl-sched-e2e-"

// Start builds missing binaries, then starts etcd and kube-apiserver on free
// loopback ports and waits for /readyz. The caller must call Stop (tests:
// t.Cleanup, or StartForTest). On error nothing is left running and the
// error carries the tail of the failing program's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 90 * time.Second
	}
	if opts.QPS == 0 {
		opts.QPS = 500
	}
	if opts.Burst == 0 {
		opts.Burst = 1000
	}
	if os.Getenv("KUBECTL_SCHED_E2E_KEEP") == "1" {
		opts.KeepStateDir = true
	}
	if opts.BinDir == "" {
		dir, err := EnsureBinaries(ctx, opts.Progress)
		if err != nil {
			return nil, err
		}
		opts.BinDir = dir
	}
	removeStaleStateDirs()

	c := &Cluster{BinDir: opts.BinDir, keep: opts.KeepStateDir, progress: opts.Progress, schedArgs: opts.ExtraSchedulerArgs}
	if opts.StateDir == "" {
		dir, err := os.MkdirTemp("", stateDirPrefix)
		if err != nil {
			return nil, fmt.Errorf("creating state dir: %w", err)
		}
		c.StateDir = dir
	} else {
		if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
			return nil, fmt.Errorf("creating state dir: %w", err)
		}
		c.StateDir = opts.StateDir
	}
	// The owner file lets a later Start remove this directory if the owner
	// died without Stop (SIGKILL, -timeout).
	if err := os.WriteFile(filepath.Join(c.StateDir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}

	// Free ports are found by binding :0 and closing; another process can take
	// one in between, so a start that loses that race is tried again.
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if err = c.start(ctx, opts); err == nil {
			return c, nil
		}
		c.stopProcesses()
		if !containsAddrInUse(err) || ctx.Err() != nil {
			break
		}
		fmt.Fprintf(c.progress, "cluster: port taken, retrying (%v)\n", err)
	}
	c.Stop()
	return nil, err
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	start := time.Now()
	var err error
	if c.pki == nil {
		if c.pki, err = newPKI(c.StateDir); err != nil {
			return err
		}
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdPort, peerPort, apiPort := ports[0], ports[1], ports[2]
	dataDir := filepath.Join(c.StateDir, "etcd-data")
	_ = os.RemoveAll(dataDir)

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	etcd, err := c.run(EtcdBinary, []string{
		"--name=e2e",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=e2e=" + peerURL,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync", // test data: durability is not worth the fsyncs
		"--snapshot-count=100000",
		"--quota-backend-bytes=4294967296",
		"--log-level=warn",
	})
	if err != nil {
		return err
	}
	readyCtx, cancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer cancel()
	if err := waitReady(readyCtx, etcd, etcdURL+"/health", http.DefaultClient); err != nil {
		return err
	}
	fmt.Fprintf(c.progress, "cluster: etcd ready on %s after %v\n", etcdURL, time.Since(start).Round(time.Millisecond))

	c.Host = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--cert-dir=" + c.StateDir,
		"--tls-cert-file=" + c.pki.CertFile,
		"--tls-private-key-file=" + c.pki.KeyFile,
		"--client-ca-file=" + c.pki.CAFile,
		"--service-account-key-file=" + c.pki.SAPublicKeyFile,
		"--service-account-signing-key-file=" + c.pki.SAKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--api-audiences=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.0.0.0/24",
		// 127.0.0.1 is not a valid endpoint for the kubernetes Service.
		"--endpoint-reconciler-type=none",
		// RBAC as in a real cluster; the admin cert is in system:masters.
		"--authorization-mode=RBAC",
		// No controller-manager runs: ServiceAccount would reject pods for
		// want of a default ServiceAccount, TaintNodesByCondition would keep
		// every new Node tainted not-ready.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}
	args = append(args, opts.ExtraAPIServerArgs...)
	c.apiArgs, c.readyTimeout = args, opts.ReadyTimeout
	apiserver, err := c.run(APIServerBinary, args)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.apiserver = apiserver
	c.mu.Unlock()

	if err := c.writeKubeconfig(); err != nil {
		return err
	}
	if err := c.waitAPIServerReady(readyCtx, apiserver); err != nil {
		return err
	}
	fmt.Fprintf(c.progress, "cluster: kube-apiserver ready on %s after %v\n", c.Host, time.Since(start).Round(time.Millisecond))

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", c.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	cfg.UserAgent = "kubectl-sched-e2e"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c.Config, c.Client = cfg, client
	return nil
}

// waitAPIServerReady polls the apiserver's /readyz as the admin.
func (c *Cluster) waitAPIServerReady(ctx context.Context, apiserver *Process) error {
	caPool := x509.NewCertPool()
	caPool.AppendCertsFromPEM(c.pki.CAData)
	adminCert, err := tls.X509KeyPair(c.pki.AdminCertData, c.pki.AdminKeyData)
	if err != nil {
		return fmt.Errorf("loading admin certificate: %w", err)
	}
	httpc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: caPool, Certificates: []tls.Certificate{adminCert}, MinVersion: tls.VersionTLS12,
	}}}
	defer httpc.CloseIdleConnections()
	return waitReady(ctx, apiserver, c.Host+"/readyz", httpc)
}

// StopAPIServer stops kube-apiserver (SIGTERM, SIGKILL after grace; a zero
// grace kills it at once), leaving etcd and its data running, so that
// StartAPIServer brings the same cluster back on the same port. Clients see
// refused connections meanwhile.
func (c *Cluster) StopAPIServer(grace time.Duration) error {
	c.mu.Lock()
	p := c.apiserver
	c.apiserver = nil
	if p != nil {
		for i, q := range c.procs {
			if q == p {
				c.procs = append(c.procs[:i:i], c.procs[i+1:]...)
				break
			}
		}
		c.dead = append(c.dead, p)
	}
	c.mu.Unlock()
	if p == nil {
		return errors.New("kube-apiserver is not running")
	}
	if grace == 0 {
		p.Kill()
	} else {
		p.Stop(grace)
	}
	fmt.Fprintf(c.progress, "cluster: kube-apiserver stopped\n")
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, with the
// same flags (port, etcd, certificates), and waits for /readyz.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	running := c.apiserver != nil
	c.mu.Unlock()
	if running {
		return errors.New("kube-apiserver is already running")
	}
	start := time.Now()
	p, err := c.run(APIServerBinary, c.apiArgs)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.apiserver = p
	c.mu.Unlock()
	readyCtx, cancel := context.WithTimeout(ctx, c.readyTimeout)
	defer cancel()
	if err := c.waitAPIServerReady(readyCtx, p); err != nil {
		return err
	}
	fmt.Fprintf(c.progress, "cluster: kube-apiserver ready again on %s after %v\n", c.Host, time.Since(start).Round(time.Millisecond))
	return nil
}

// run starts one program with its log in the state directory.
func (c *Cluster) run(name string, args []string) (*Process, error) {
	logName := name
	c.mu.Lock()
	if name == SchedulerBinary {
		c.nSched++
		if c.nSched > 1 {
			logName = fmt.Sprintf("%s-%d", name, c.nSched)
		}
	}
	c.mu.Unlock()
	p, err := startProcess(name, filepath.Join(c.BinDir, name), args, filepath.Join(c.StateDir, logName+".log"))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}

// StartProgram runs another program against the cluster (a scheduler
// binary under test), with its log as <name>.log in the state directory;
// Stop stops it with the control plane, DumpLogs shows its log.
func (c *Cluster) StartProgram(name, bin string, args []string) (*Process, error) {
	p, err := startProcess(name, bin, args, filepath.Join(c.StateDir, name+".log"))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}

// writeKubeconfig writes an admin kubeconfig with embedded certificates, so
// the file works wherever it is copied (until the cluster stops).
func (c *Cluster) writeKubeconfig() error {
	c.Kubeconfig = filepath.Join(c.StateDir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.pki.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.pki.AdminCertData, ClientKeyData: c.pki.AdminKeyData}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*cfg, c.Kubeconfig); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// Stop kills the control plane (scheduler, apiserver, etcd: newest first) and
// removes the state directory unless it is kept. Safe to call more than once
// and on a partly started cluster.
func (c *Cluster) Stop() {
	if c == nil {
		return
	}
	c.stopOnce.Do(func() {
		c.stopProcesses()
		if c.keep {
			fmt.Fprintf(c.progress, "cluster: state kept in %s\n", c.StateDir)
			return
		}
		if c.StateDir != "" {
			_ = os.RemoveAll(c.StateDir)
		}
	})
}

func (c *Cluster) stopProcesses() {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].Stop(10 * time.Second)
	}
	c.mu.Lock()
	c.dead = append(c.dead, procs...)
	c.mu.Unlock()
}

// Processes returns the programs started so far, in start order.
func (c *Cluster) Processes() []*Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append(append([]*Process(nil), c.dead...), c.procs...)
}

// DumpLogs writes the last lines of every program's log to w: call it when a
// test fails, before Stop removes the files.
func (c *Cluster) DumpLogs(w io.Writer, lines int) {
	dumpLogs(w, c.Processes(), lines)
}

// waitReady polls url until it answers 200, the process exits, or ctx ends.
func waitReady(ctx context.Context, p *Process, url string, client *http.Client) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-p.Exited():
			return fmt.Errorf("%w before %s answered; last lines of %s:\n%s", p.exitError(), url, p.LogFile, p.tail(30))
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s (%s): %w (last answer: %s); last lines of %s:\n%s",
				url, p.Name, ctx.Err(), last, p.LogFile, p.tail(30))
		case <-tick.C:
		}
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// removeStaleStateDirs deletes temporary state directories whose owner
// process is gone (a test binary killed before it could call Stop).
func removeStaleStateDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), stateDirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}
