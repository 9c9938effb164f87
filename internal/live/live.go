// Package live is the engine's live driver, the sibling of internal/dryrun:
// informers feed the cache and the scheduling queue (with kube-scheduler's
// event handlers), the real scheduling loop pops and places pods, and the
// decisions go back to the API server — bindings through pods/binding,
// PodScheduled conditions and nominated node names through pods/status,
// Events through events/v1. Around it: leader election on a Lease,
// kube-scheduler's Prometheus metrics, health endpoints and a graceful
// shutdown.
package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// ErrLeaderElectionLost is returned when another instance took the lease
// while this one was leading; kube-scheduler exits 1 then, and so should a
// caller, since its caches may no longer match what it was doing.
var ErrLeaderElectionLost = errors.New("leaderelection lost")

// DefaultShutdownGracePeriod bounds the wait for in-flight binding cycles
// on shutdown; those still running afterwards are cancelled (and unreserve).
const DefaultShutdownGracePeriod = 30 * time.Second

// ErrSyncTimeout is returned when the informers have not synced within
// Options.SyncTimeout.
var ErrSyncTimeout = errors.New("informers not synced")

// Options configure Run.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration. Its
	// clientConnection is not applied here (RESTConfig carries it); its
	// leaderElection is read when LeaderElect is set.
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (in-tree plus extra).
	Registry schedcore.Registry
	// RESTConfig reaches the cluster.
	RESTConfig *rest.Config
	// LeaderElect turns leader election on; LeaderElection (defaulted with
	// DefaultLeaderElection) says on which Lease and how.
	LeaderElect    bool
	LeaderElection LeaderElection
	// MetricsBindAddress is where /metrics, /healthz, /readyz and /livez
	// are served; empty or "0" serves nothing.
	MetricsBindAddress string
	// ShutdownGracePeriod bounds the wait for in-flight bindings on
	// shutdown (default DefaultShutdownGracePeriod).
	ShutdownGracePeriod time.Duration
	// SyncTimeout bounds the wait for the informers' first sync; Run
	// returns ErrSyncTimeout after it. Zero waits as long as ctx lasts.
	SyncTimeout time.Duration
	// Features are the feature gates (zero value: defaults).
	Features schedcore.Features
	// Logger receives the logs; zero discards.
	Logger logr.Logger
	// OnServing, if set, is called with the address the HTTP server
	// listens on, once it does (tests pass port 0).
	OnServing func(addr string)
	// OnMetrics, if set, is given the metrics registry once it exists
	// (`run --tui` reads it in-process).
	OnMetrics func(prometheus.Gatherer)

	// waitInterval is how often the start-up says what it waits for
	// (default kube.DefaultReportInterval; tests shorten it).
	waitInterval time.Duration
}

// Run schedules the pods of the configuration's profiles until ctx ends
// (SIGINT/SIGTERM in the CLI), then shuts down gracefully: it stops popping
// pods, waits for in-flight binding cycles, and releases the lease. It
// returns ErrLeaderElectionLost if the lease was lost while leading,
// ErrSyncTimeout if the informers did not list the cluster within
// SyncTimeout, and ErrStartupInterrupted if ctx ended before they did;
// while it waits for them it logs, every 10s, the kinds not yet listed.
func Run(ctx context.Context, o Options) error {
	d, err := newDriver(ctx, o)
	if err != nil {
		return err
	}
	return d.run(ctx)
}

// driver is one running scheduler.
type driver struct {
	o      Options
	logger logr.Logger
	client kubernetes.Interface
	// leaderClient renews the lease (its own rate limiter).
	leaderClient kubernetes.Interface

	factory informers.SharedInformerFactory
	// dynFactory serves scheduler-plugins' PodGroups; nil unless needed.
	dynFactory  dynamicinformer.DynamicSharedInformerFactory
	broadcaster eventBroadcaster
	// eventSink bounds the event writes in flight; nil with core/v1 events.
	eventSink *boundedSink
	metrics   *Metrics
	eng       *engine.Engine
	cache     *schedcore.Cache
	queue     *queue.PriorityQueue
	profiles  *engine.Profiles
	handlers  *handlers
	// objects serves the plugins pods and PodGroups; its PodGroup listers
	// are set once the API's PodGroup resources are known.
	objects *liveObjects
	regs    []cache.ResourceEventHandlerRegistration

	storageMu, selectorsMu sync.Mutex
	listersReady           bool // guarded by both mutexes

	ready, shuttingDown flag
}

func newDriver(ctx context.Context, o Options) (*driver, error) {
	if o.Config == nil || o.RESTConfig == nil || o.Registry == nil {
		return nil, errors.New("live: Config, RESTConfig and Registry are required")
	}
	if o.ShutdownGracePeriod == 0 {
		o.ShutdownGracePeriod = DefaultShutdownGracePeriod
	}
	if o.LeaderElect {
		o.LeaderElection = o.LeaderElection.withDefaults()
		if err := o.LeaderElection.validate(); err != nil {
			return nil, err
		}
	}
	client, factory, err := kube.ClientsForConfig(o.RESTConfig, 0)
	if err != nil {
		return nil, err
	}
	d := &driver{o: o, logger: o.Logger, client: client, factory: factory, metrics: NewMetrics()}
	d.metrics.RegisterWorkloadMetrics(o.Features)
	if o.OnMetrics != nil {
		o.OnMetrics(d.metrics.Registry)
	}
	d.ready.msg = "informers not synced"
	d.shuttingDown.msg = "shutting down"
	if d.logger.GetSink() == nil {
		d.logger = logr.Discard()
	}
	// As kube-scheduler, events and leader election get clientsets of their
	// own, so their rate limiters do not compete with bindings and status
	// updates (nor a lease renewal wait behind a burst of events).
	eventClient, err := kubernetes.NewForConfig(o.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("creating event clientset: %w", err)
	}
	if d.leaderClient, err = kubernetes.NewForConfig(o.RESTConfig); err != nil {
		return nil, fmt.Errorf("creating leader election clientset: %w", err)
	}
	d.broadcaster, d.eventSink = newEventBroadcaster(ctx, eventClient)

	// The PDB informer is requested here so that factory.Start starts it.
	pdbs := factory.Policy().V1().PodDisruptionBudgets()
	pdbs.Informer()
	hooks := preemptionHooks(client, pdbs.Lister())
	hooks.Attempted, hooks.Victims = d.metrics.PreemptionAttempt, d.metrics.PreemptionVictims
	hooks.GroupAttempted, hooks.GroupVictims, hooks.Disruptions = d.metrics.WorkloadPreemptionAttempt, d.metrics.WorkloadPreemptionVictims, d.metrics.WorkloadDisruptions
	pods := factory.Core().V1().Pods().Lister()
	d.objects = &liveObjects{pods: pods}
	d.eng, err = engine.New(ctx, engine.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, Logger: d.logger, Seed: time.Now().UnixNano()}, engine.Driver{
		Binder:      newAPIBinder(client),
		ClaimWriter: apiClaimWriter{client: client},
		VolumeBinder: apiVolumeBinder{client: client, pvs: factory.Core().V1().PersistentVolumes().Lister(),
			pvcs: factory.Core().V1().PersistentVolumeClaims().Lister()},
		Preemption: hooks,
		// Events name the profile as their reporting controller, as
		// kube-scheduler's recorder factory does.
		Events:  func(profile string) schedcore.EventRecorder { return d.broadcaster.NewRecorder(profile) },
		Objects: d.objects,
		Pod: func(ns, name string) (*v1.Pod, bool) {
			p, err := pods.Pods(ns).Get(name)
			return p, err == nil
		},
		Scheduled:      d.scheduled,
		Failed:         d.failed,
		PodGroupStatus: podGroupStatusPatcher(client, d.logger),
		Recorder:       d.metrics,
		QueueMetrics:   d.metrics,
	})
	if err != nil {
		return nil, err
	}
	d.cache, d.queue, d.profiles = d.eng.Cache, d.eng.Queue, d.eng.Profiles

	d.handlers = &handlers{
		cache: d.cache, queue: d.queue, profiles: d.profiles.ByName, features: d.eng.Options.Features, logger: d.logger,
		observe:          d.metrics.EventHandled,
		refreshStorage:   d.refreshStorage,
		refreshSelectors: d.refreshSelectors,
	}
	if err := d.addEventHandlers(); err != nil {
		return nil, err
	}
	if d.eng.Options.Features.DynamicResourceAllocation && servesDRA(client) {
		if err := d.addDRAHandlers(); err != nil {
			return nil, err
		}
	}
	if err := d.setUpPodGroups(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *driver) addEventHandlers() error {
	f := d.factory
	add := func(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return fmt.Errorf("registering event handler: %w", err)
		}
		d.regs = append(d.regs, reg)
		return nil
	}
	h := d.handlers
	for _, x := range []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{f.Core().V1().Pods().Informer(), h.podFuncs()},
		{f.Core().V1().Nodes().Informer(), h.nodeFuncs()},
		{f.Core().V1().Namespaces().Informer(), h.namespaceFuncs()},
		{f.Core().V1().PersistentVolumeClaims().Informer(), h.storageFuncs(schedcore.PersistentVolumeClaim)},
		{f.Core().V1().PersistentVolumes().Informer(), h.storageFuncs(schedcore.PersistentVolume)},
		{f.Storage().V1().StorageClasses().Informer(), h.storageFuncs(schedcore.StorageClass)},
		{f.Storage().V1().CSINodes().Informer(), h.storageFuncs(schedcore.CSINode)},
		{f.Storage().V1().CSIDrivers().Informer(), h.storageFuncs(schedcore.CSIDriver)},
		{f.Storage().V1().CSIStorageCapacities().Informer(), h.storageFuncs(schedcore.CSIStorageCapacity)},
		{f.Core().V1().Services().Informer(), h.selectorFuncs()},
		{f.Core().V1().ReplicationControllers().Informer(), h.selectorFuncs()},
		{f.Apps().V1().ReplicaSets().Informer(), h.selectorFuncs()},
		{f.Apps().V1().StatefulSets().Informer(), h.selectorFuncs()},
	} {
		if err := add(x.inf, x.h); err != nil {
			return err
		}
	}
	return nil
}

// refreshStorage rebuilds the storage objects the volume plugins read. It
// runs before the storage event requeues pods, so a requeued pod sees the
// object that woke it.
func (d *driver) refreshStorage() {
	d.storageMu.Lock()
	defer d.storageMu.Unlock()
	if !d.listersReady {
		return
	}
	f := d.factory
	pvcs, _ := f.Core().V1().PersistentVolumeClaims().Lister().List(labels.Everything())
	pvs, _ := f.Core().V1().PersistentVolumes().Lister().List(labels.Everything())
	scs, _ := f.Storage().V1().StorageClasses().Lister().List(labels.Everything())
	csis, _ := f.Storage().V1().CSINodes().Lister().List(labels.Everything())
	drivers, _ := f.Storage().V1().CSIDrivers().Lister().List(labels.Everything())
	caps, _ := f.Storage().V1().CSIStorageCapacities().Lister().List(labels.Everything())
	st := schedcore.NewStorageState(pvcs, pvs, scs, csis, drivers, caps)
	d.cache.SetStorage(st)
}

// refreshSelectors rebuilds the default spreading selector sources.
func (d *driver) refreshSelectors() {
	d.selectorsMu.Lock()
	defer d.selectorsMu.Unlock()
	if !d.listersReady {
		return
	}
	f := d.factory
	src := &schedcore.SelectorSources{}
	src.Services, _ = f.Core().V1().Services().Lister().List(labels.Everything())
	src.ReplicationControllers, _ = f.Core().V1().ReplicationControllers().Lister().List(labels.Everything())
	src.ReplicaSets, _ = f.Apps().V1().ReplicaSets().Lister().List(labels.Everything())
	src.StatefulSets, _ = f.Apps().V1().StatefulSets().Lister().List(labels.Everything())
	d.cache.SetSelectorSources(src)
}

// scheduled runs after a pod is bound; the informer's update confirms it
// in the cache.
func (d *driver) scheduled(_ context.Context, _ *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, node string, res schedruntime.ScheduleResult) {
	if qpi.WasFlushedFromUnschedulable {
		d.metrics.ScheduledAfterFlush()
	}
	d.logger.V(2).Info("Successfully bound pod to node", "pod", schedcore.PodName(qpi.Pod), "node", node, "evaluatedNodes", res.EvaluatedNodes, "feasibleNodes", res.FeasibleNodes)
}

// failed sets the PodScheduled condition and the nominated node name after
// a failed attempt, as kube-scheduler's handleSchedulingFailure (the
// engine has already requeued the pod and recorded the FailedScheduling
// event). A pod recreated under the same name in the meantime is left alone.
func (d *driver) failed(ctx context.Context, _ *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, reason string, st *schedcore.Status, nominating *schedcore.NominatingInfo) {
	pod := qpi.Pod
	msg := st.Message()
	// The logs of kube's handleSchedulingFailure.
	if reason == schedruntime.ReasonSchedulerError {
		d.logger.Error(st.AsError(), "Error scheduling pod; retrying", "pod", schedcore.PodName(pod))
	} else {
		d.logger.V(2).Info("Unable to schedule pod; waiting", "pod", schedcore.PodName(pod), "err", msg)
	}
	cur, err := d.factory.Core().V1().Pods().Lister().Pods(pod.Namespace).Get(pod.Name)
	switch {
	case err != nil:
		d.logger.Info("Pod doesn't exist in informer cache", "pod", schedcore.PodName(pod), "err", err)
	case cur.UID != pod.UID:
		d.logger.V(2).Info("Pod was recreated while handling scheduling failure. Skip status updates.", "pod", schedcore.PodName(pod))
		return
	default:
		if cur.Spec.NodeName != "" {
			d.logger.Info("Pod has been assigned to node. Abort adding it back to queue.", "pod", schedcore.PodName(pod), "node", cur.Spec.NodeName)
		}
		pod = cur
	}
	if err := patchPodStatus(ctx, d.client, pod, unschedulableCondition(pod, reason, msg), nominating); err != nil {
		d.logger.Error(err, "Error updating pod", "pod", schedcore.PodName(pod))
	}
}

// run starts the informers and the HTTP server, then schedules (as leader
// if leader election is on) until ctx ends.
func (d *driver) run(ctx context.Context) error {
	// Informers and event recording outlive ctx until the shutdown is done.
	infCtx, stopInformers := context.WithCancel(context.WithoutCancel(ctx))
	// Run returns once the informers' goroutines have (a reflector that
	// logs after Run returned raced the CLI's reset of klog's flags), but
	// for a start-up that never synced: see unsyncedShutdownWait.
	defer d.shutdownInformers(stopInformers)
	d.broadcaster.StartRecordingToSink(infCtx.Done())
	go d.metrics.refillEvery(infCtx, asyncFlushInterval)
	defer d.broadcaster.Shutdown()
	// Last (deferred calls run in reverse): the events still being
	// written finish before the broadcaster stops.
	defer d.eventSink.drain(5 * time.Second)

	var le *leaderElector
	if d.o.LeaderElect {
		var err error
		if le, err = newLeaderElector(d.leaderClient, d.o.LeaderElection, d.logger); err != nil {
			return err
		}
	}
	if addr := d.o.MetricsBindAddress; addr != "" && addr != "0" {
		healthy := func(r *http.Request) error {
			if le != nil {
				return le.watchdog.Check(r)
			}
			return nil
		}
		ready := func(r *http.Request) error {
			if d.shuttingDown.isSet() {
				return errors.New(d.shuttingDown.msg)
			}
			return d.ready.check(r)
		}
		srv, err := newServer(addr, d.metrics.Registry, healthy, ready)
		if err != nil {
			return err
		}
		go func() {
			if err := srv.serve(); err != nil {
				d.logger.Error(err, "Serving metrics and health endpoints")
			}
		}()
		defer srv.shutdown()
		d.logger.Info("Serving metrics and health endpoints", "address", srv.Addr())
		if d.o.OnServing != nil {
			d.o.OnServing(srv.Addr())
		}
	}

	// The sync timeout starts now: the version request below counts.
	syncCtx := ctx
	if d.o.SyncTimeout > 0 {
		var cancel context.CancelFunc
		syncCtx, cancel = context.WithTimeout(ctx, d.o.SyncTimeout)
		defer cancel()
	}
	// One request first, so that the informers' concurrent lists share
	// its HTTP/2 connection instead of each dialling (and the server
	// handshaking) one of their own.
	if err := d.client.Discovery().RESTClient().Get().AbsPath("/version").Timeout(10 * time.Second).Do(syncCtx).Error(); err != nil {
		d.logger.Info("Reading the server version", "err", err)
	}
	d.factory.Start(infCtx.Done())
	if d.dynFactory != nil {
		d.dynFactory.Start(infCtx.Done())
	}
	w := &startupWait{d: d, ctx: ctx, syncCtx: syncCtx, start: time.Now(), interval: d.waitInterval()}
	if err := d.waitForSync(w); err != nil {
		return err
	}
	d.storageMu.Lock()
	d.selectorsMu.Lock()
	d.listersReady = true
	d.selectorsMu.Unlock()
	d.storageMu.Unlock()
	d.refreshStorage()
	d.refreshSelectors()
	d.ready.set()
	d.logger.Info("Informers synced", "profiles", d.profiles.Order)

	if le == nil {
		d.schedule(ctx, context.Background())
		return nil
	}
	return le.run(ctx, d.schedule)
}

// schedule runs the scheduling loop until ctx ends (shutdown: in-flight
// bindings get the grace period) or leading ends (leadership lost: they
// are cancelled at once, since another instance now schedules).
func (d *driver) schedule(ctx, leading context.Context) {
	d.logger.Info("Starting to schedule pods")
	d.queue.Run(d.logger)
	bindCtx, cancelBindings := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBindings()
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.eng.Scheduler.Run(bindCtx)
	}()
	select {
	case <-ctx.Done():
	case <-leading.Done():
	}
	d.shuttingDown.set()
	d.queue.Close()
	if ctx.Err() == nil {
		cancelBindings()
	}
	select {
	case <-done:
	case <-time.After(d.o.ShutdownGracePeriod):
		d.logger.Info("Shutdown grace period over; cancelling in-flight bindings")
		cancelBindings()
		<-done
	}
	d.logger.Info("Stopped scheduling")
}

// hostnameIdentity is kube-scheduler's lease holder identity: the host name
// and a UUID, so that two instances on one host differ.
func hostnameIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("getting hostname: %w", err)
	}
	return host + "_" + uuid.NewString(), nil
}
