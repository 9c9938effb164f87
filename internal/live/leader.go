package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Leader election defaults: kube's RecommendedDefaultLeaderElectionConfiguration
// (component-base) for the durations and the lock, kube-scheduler's
// namespace. The lease name differs from kube-scheduler's ("kube-scheduler")
// so that kubectl-sched running beside it never takes its lease.
const (
	DefaultLeaseDuration     = 15 * time.Second
	DefaultRenewDeadline     = 10 * time.Second
	DefaultRetryPeriod       = 2 * time.Second
	DefaultResourceLock      = resourcelock.LeasesResourceLock
	DefaultResourceNamespace = "kube-system"
	DefaultResourceName      = "kubectl-sched"
)

// leaderHealthTimeout is how long past a missed renewal /healthz still
// passes, as kube-scheduler's leader election healthz adaptor.
const leaderHealthTimeout = 20 * time.Second

// LeaderElection says on which Lease and how instances elect a leader. Zero
// fields take the defaults above.
type LeaderElection struct {
	LeaseDuration, RenewDeadline, RetryPeriod     time.Duration
	ResourceLock, ResourceNamespace, ResourceName string
	// Identity of this instance; default the host name and a UUID.
	Identity string
}

// LeaderElectionFromConfig takes the leaderElection section of a
// KubeSchedulerConfiguration; its leaderElect says whether it is on
// (kube's default: on).
func LeaderElectionFromConfig(c configv1.KubeSchedulerConfiguration) (le LeaderElection, on bool) {
	l := c.LeaderElection
	le = LeaderElection{
		LeaseDuration: l.LeaseDuration.Duration, RenewDeadline: l.RenewDeadline.Duration, RetryPeriod: l.RetryPeriod.Duration,
		ResourceLock: l.ResourceLock, ResourceNamespace: l.ResourceNamespace, ResourceName: l.ResourceName,
	}
	return le.withDefaults(), l.LeaderElect == nil || *l.LeaderElect
}

func (l LeaderElection) withDefaults() LeaderElection {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defs := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&l.LeaseDuration, DefaultLeaseDuration)
	def(&l.RenewDeadline, DefaultRenewDeadline)
	def(&l.RetryPeriod, DefaultRetryPeriod)
	defs(&l.ResourceLock, DefaultResourceLock)
	defs(&l.ResourceNamespace, DefaultResourceNamespace)
	defs(&l.ResourceName, DefaultResourceName)
	return l
}

// Validate checks l, with the defaults for its zero fields, as Run will:
// callers check it before contacting the cluster.
func (l LeaderElection) Validate() error { return l.withDefaults().validate() }

// validate applies kube's rules (component-base ValidateLeaderElectionConfiguration).
func (l LeaderElection) validate() error {
	switch {
	case l.LeaseDuration <= l.RenewDeadline:
		return fmt.Errorf("leaderElection.leaseDuration: %v must be greater than renewDeadline %v", l.LeaseDuration, l.RenewDeadline)
	case l.RenewDeadline <= l.RetryPeriod:
		return fmt.Errorf("leaderElection.renewDeadline: %v must be greater than retryPeriod %v", l.RenewDeadline, l.RetryPeriod)
	case l.ResourceLock != resourcelock.LeasesResourceLock:
		return fmt.Errorf("leaderElection.resourceLock: unsupported %q (want %q)", l.ResourceLock, resourcelock.LeasesResourceLock)
	}
	return nil
}

type leaderElector struct {
	config   leaderelection.LeaderElectionConfig
	watchdog *leaderelection.HealthzAdaptor
	logger   logr.Logger
}

func newLeaderElector(client kubernetes.Interface, l LeaderElection, logger logr.Logger) (*leaderElector, error) {
	id := l.Identity
	if id == "" {
		var err error
		if id, err = hostnameIdentity(); err != nil {
			return nil, err
		}
	}
	lock, err := resourcelock.New(l.ResourceLock, l.ResourceNamespace, l.ResourceName, client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return nil, fmt.Errorf("creating leader election lock: %w", err)
	}
	e := &leaderElector{
		watchdog: leaderelection.NewLeaderHealthzAdaptor(leaderHealthTimeout),
		logger:   logger.WithValues("lease", l.ResourceNamespace+"/"+l.ResourceName, "identity", id),
	}
	e.config = leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   l.LeaseDuration,
		RenewDeadline:   l.RenewDeadline,
		RetryPeriod:     l.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        e.watchdog,
		Name:            l.ResourceName,
	}
	return e, nil
}

// run campaigns for the lease until ctx ends; while leading it calls
// schedule, which must return when ctx or its leading context ends. On
// shutdown the lease is released only after schedule returned (in-flight
// bindings done), so the next leader never races this one's bindings. It
// returns ErrLeaderElectionLost if the lease was lost while leading.
func (e *leaderElector) run(ctx context.Context, schedule func(ctx, leading context.Context)) error {
	// Cancelling leCtx gives the lease up; it is not ctx, so that a signal
	// does not release the lease before the bindings are done.
	leCtx, release := context.WithCancel(context.WithoutCancel(ctx))
	defer release()
	var (
		mu               sync.Mutex
		started, stopped bool
		lost             bool
		done             = make(chan struct{})
	)
	cfg := e.config
	cfg.Callbacks = leaderelection.LeaderCallbacks{
		OnStartedLeading: func(leading context.Context) {
			mu.Lock()
			if stopped {
				// The elector already returned (ctx ended as it acquired).
				mu.Unlock()
				return
			}
			started = true
			mu.Unlock()
			defer close(done)
			e.logger.Info("Started leading")
			schedule(ctx, leading)
			if ctx.Err() == nil {
				e.logger.Info("Leader election lost")
				mu.Lock()
				lost = true
				mu.Unlock()
			}
			release()
		},
		OnStoppedLeading: func() {},
	}
	le, err := leaderelection.NewLeaderElector(cfg)
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	e.watchdog.SetLeaderElection(le)
	go func() {
		<-ctx.Done()
		mu.Lock()
		leading := started
		mu.Unlock()
		if !leading {
			release()
		}
	}()
	e.logger.Info("Attempting to acquire leader lease")
	le.Run(leCtx)
	mu.Lock()
	stopped = true
	wasLeading := started
	mu.Unlock()
	if wasLeading {
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	if lost {
		return ErrLeaderElectionLost
	}
	return nil
}
