// Package engine assembles schedcore for the drivers, in one place: it
// loads and defaults the KubeSchedulerConfiguration, merges the plugin
// registry, builds the profiles, the scheduling queue and the scheduler
// loop, and fills the cache from cluster objects. A driver (dryrun,
// explain, run, and the offline drivers built on Offline) supplies only
// what differs: where state comes from and where decisions go (a Driver).
package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// ErrNoNodes is returned for a cluster without nodes.
var ErrNoNodes = errors.New("the cluster has no nodes")

// LoadConfig reads, defaults and validates a KubeSchedulerConfiguration
// file; "" gives kube-scheduler v1.37's defaults. Errors name the file and
// field. The default profile is the one of the default feature gates.
func LoadConfig(path string) (*configv1.KubeSchedulerConfiguration, error) {
	return LoadConfigWithFeatures(path, schedcore.DefaultFeatures)
}

// LoadConfigWithFeatures is LoadConfig with the default profile of the
// feature gates f, as kube's defaulting applies them
// (plugins.DefaultPluginsFor: GangScheduling with GenericWorkload, ...).
func LoadConfigWithFeatures(path string, f schedcore.Features) (*configv1.KubeSchedulerConfiguration, error) {
	cfg := &configv1.KubeSchedulerConfiguration{}
	if path != "" {
		var err error
		if cfg, err = schedcore.LoadConfigFile(path); err != nil {
			return nil, err
		}
	}
	schedcore.SetConfigDefaults(cfg, func() *configv1.Plugins { return plugins.DefaultPluginsFor(f) })
	if err := schedcore.ValidateConfig(cfg); err != nil {
		return nil, withFile(path, err)
	}
	return cfg, nil
}

func withFile(path string, err error) error {
	if path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// Registry returns the in-tree plugins plus extra ones; a name clash is an
// error.
func Registry(extra schedcore.Registry) (schedcore.Registry, error) {
	r := plugins.NewInTreeRegistry()
	if err := r.Merge(extra); err != nil {
		return nil, err
	}
	return r, nil
}

// ErrConfig marks errors in the scheduler configuration (unknown plugins,
// bad weights, invalid plugin args), found when the profiles are built.
var ErrConfig = errors.New("invalid scheduler configuration")

type configError struct{ err error }

func (e configError) Error() string   { return e.err.Error() }
func (e configError) Unwrap() []error { return []error{e.err, ErrConfig} }

// Options are what every driver's engine is made of: the configuration,
// the plugins, the feature gates and how ties are broken.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration (nil:
	// kube-scheduler's defaults).
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (nil: the in-tree ones).
	Registry schedcore.Registry
	// Features are the feature gates; the zero value means
	// schedcore.DefaultFeatures.
	Features schedcore.Features
	// Logger receives the engine's logs; the zero value discards.
	Logger logr.Logger
	// Seed seeds the handles' random sources. With UseSeed it also breaks
	// ties between equal best totals and picks where the preemption scan
	// starts, pseudo-randomly and reproducibly; without it the lowest node
	// name wins and the scan starts at the first node (or where the
	// driver's PreemptionHooks.Offset says).
	Seed    int64
	UseSeed bool
	// NoPreemption turns the PostFilter plugins off.
	NoPreemption bool
	// InPlace lets NewOffline fill in what a pod of the cluster lacks (a
	// UID) in the cluster's own objects instead of in copies of every
	// pod: for a caller that does not need the cluster's pods unchanged
	// (the benchmark, dryrun). It saves a v1.Pod (1.2 KiB) per pod of the
	// cluster, and the pods and nodes then share their equal parts
	// (internal/share) unless the loader shared them (snapshot.Cluster's
	// Sharer).
	InPlace bool
	// ClaimsAsListed leaves the pods' template claims as the cluster has
	// them: Load does not do the resourceclaim controller's work. For a
	// live listing, where a missing claim is one the controller has not
	// made yet and its pod is held by PreEnqueue.
	ClaimsAsListed bool
}

// withDefaults fills in what the zero value leaves out; it is the one
// place where zero features mean the defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Features == (schedcore.Features{}) {
		o.Features = schedcore.DefaultFeatures
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Config == nil {
		// kube's defaults, under the gates: GangScheduling and the
		// placement plugins join the default profile with theirs.
		cfg, err := LoadConfigWithFeatures("", o.Features)
		if err != nil {
			return o, err
		}
		o.Config = cfg
	}
	if o.Registry == nil {
		r, err := Registry(nil)
		if err != nil {
			return o, err
		}
		o.Registry = r
	}
	return o, nil
}

// TieBreak is the options' choice among nodes tied for the best total:
// nil (the lowest name) unless UseSeed.
func (o Options) TieBreak() schedruntime.TieBreak {
	if !o.UseSeed {
		return nil
	}
	r := rand.New(rand.NewSource(o.Seed))
	return func(tied []string) string { return tied[r.Intn(len(tied))] }
}

// Driver is what a driver plugs into the engine: where the current state
// of pods and other objects comes from, where decisions go, and what it
// observes. The zero value is a driver that reads nothing beyond the cache
// and writes nothing (explain's).
type Driver struct {
	// Binder takes bindings (DefaultBinder); nil: binding fails.
	Binder schedcore.Binder
	// VolumeBinder takes VolumeBinding's PreBind writes; nil: none.
	VolumeBinder schedcore.VolumeBinder
	// DRA holds the Dynamic Resource Allocation objects all profiles
	// share; nil: a new, empty one (Load fills it from the cluster, run's
	// informers feed it).
	DRA *schedcore.DRAManager
	// ClaimWriter takes DynamicResources' API writes (claim allocation,
	// reservation, template and extended-resource claims); nil: none, so
	// pods with claims cannot be bound.
	ClaimWriter schedcore.ResourceClaimWriter
	// Preemption is the driver's side of preemption: PDBs, the evictor,
	// metrics. Offset, when nil, is set from Options.UseSeed.
	Preemption schedcore.PreemptionHooks
	// Events returns the event sink of a profile; nil: no events.
	Events func(profile string) schedcore.EventRecorder
	// Objects lists every pod the driver knows and objects of other
	// kinds (PodGroups); nil: none.
	Objects schedcore.ObjectLister
	// Nominator, when set, answers the nominated pods instead of the
	// scheduling queue (explain holds the cluster's nominations itself).
	Nominator schedcore.PodNominator
	// Pod returns the driver's latest copy of a pod, ok false when it is
	// gone: the scheduler requeues a failed pod only if it still exists
	// unassigned, and the queue nominates only such pods. Nil: every pod
	// is taken as current.
	Pod queue.PodGetter
	// Clock is the engine's clock (Permit timeouts, backoff, plugin
	// time); nil: the real clock.
	Clock clock.WithTicker
	// SyncBinding runs binding cycles in the scheduling goroutine (the
	// offline drivers).
	SyncBinding bool
	// ScoreTotalsOnly: the ScheduleResult given to Scheduled holds each
	// scored node's Name and TotalScore, without per-plugin lists
	// (schedruntime.Algorithm.ScoreTotalsOnly).
	ScoreTotalsOnly bool
	// Scheduled and Failed observe each pod bound and each failed attempt
	// (schedruntime.Hooks).
	Scheduled func(ctx context.Context, fw *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, node string, result schedruntime.ScheduleResult)
	Failed    func(ctx context.Context, fw *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, reason string, status *schedcore.Status, nominating *schedcore.NominatingInfo)
	// PodGroupStatus takes a PodGroup status a pod-group cycle wrote
	// (schedruntime.Hooks); nil: dropped.
	PodGroupStatus func(ctx context.Context, pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus)
	// Recorder and QueueMetrics receive the framework's, the scheduler's
	// and the queue's measurements; nil: none.
	Recorder     schedruntime.MetricsRecorder
	QueueMetrics queue.Metrics
}

// Profiles are the built frameworks by schedulerName, with their order.
type Profiles struct {
	ByName map[string]*schedruntime.Framework
	Order  []string
}

// Engine is schedcore assembled: the cache and its snapshot, the profiles,
// the scheduling queue and the scheduler loop, wired to one driver.
type Engine struct {
	Cache     *schedcore.Cache
	Snapshot  *schedcore.Snapshot
	Profiles  *Profiles
	Queue     *queue.PriorityQueue
	Scheduler *schedruntime.Scheduler
	// DRA holds the DRA objects and the in-flight allocations.
	DRA *schedcore.DRAManager
	// Options are the options the engine was built with, defaulted.
	Options Options
}

// New assembles an engine for a driver. Configuration errors (unknown
// plugins, invalid args) wrap ErrConfig and name the profile field.
func New(ctx context.Context, o Options, d Driver) (*Engine, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return assemble(ctx, o, d, schedcore.NewCache(o.Features), schedcore.NewEmptySnapshot())
}

// Rewire assembles a new engine for the driver d over e's cache, snapshot
// and DRA objects (d.DRA is ignored): new profiles, queue and scheduler,
// with e's options. What e loaded is not loaded again, but the new queue
// holds no pod and no PodGroup yet. e must not be used afterwards: the two
// engines would share a cache.
func (e *Engine) Rewire(ctx context.Context, d Driver) (*Engine, error) {
	d.DRA = e.DRA
	return assemble(ctx, e.Options, d, e.Cache, e.Snapshot)
}

// assemble is New over a given cache and snapshot, with defaulted options.
func assemble(ctx context.Context, o Options, d Driver, cache *schedcore.Cache, snap *schedcore.Snapshot) (*Engine, error) {
	var err error
	cfg := o.Config
	if d.DRA == nil {
		d.DRA = schedcore.NewDRAManager()
	}
	d.DRA.SetDeviceTaintRules(o.Features.DRADeviceTaints && o.Features.DRADeviceTaintRules)
	e := &Engine{Cache: cache, Snapshot: snap, DRA: d.DRA, Options: o}
	if e.Profiles, err = buildProfiles(ctx, o, d, e.Snapshot, e.Cache.SelectorSources, e.Cache); err != nil {
		return nil, err
	}
	qopts := []queue.Option{
		queue.WithPodInitialBackoffDuration(time.Duration(*cfg.PodInitialBackoffSeconds) * time.Second),
		queue.WithPodMaxBackoffDuration(time.Duration(*cfg.PodMaxBackoffSeconds) * time.Second),
		queue.WithLogger(o.Logger),
		queue.WithFeatures(o.Features),
	}
	if d.Clock != nil {
		qopts = append(qopts, queue.WithClock(d.Clock))
	}
	if d.QueueMetrics != nil {
		qopts = append(qopts, queue.WithMetrics(d.QueueMetrics))
	}
	if d.Pod != nil {
		qopts = append(qopts, queue.WithPodGetter(d.Pod))
	}
	first := e.Profiles.ByName[e.Profiles.Order[0]]
	e.Queue = queue.New(first.QueueSortLess(), e.Profiles.ByName, qopts...)

	var pct int32
	if cfg.PercentageOfNodesToScore != nil {
		pct = *cfg.PercentageOfNodesToScore
	}
	s := schedruntime.NewScheduler(e.Cache, e.Queue, e.Profiles.ByName, e.Snapshot, &schedruntime.Algorithm{PercentageOfNodesToScore: pct, TieBreak: o.TieBreak(), ScoreTotalsOnly: d.ScoreTotalsOnly})
	s.Recorder, s.Logger, s.SyncBinding = d.Recorder, o.Logger, d.SyncBinding
	if d.Clock != nil {
		s.Clock = d.Clock
	}
	s.Hooks = schedruntime.Hooks{Scheduled: d.Scheduled, Failed: d.Failed, PodGroupStatus: d.PodGroupStatus}
	if d.Pod != nil {
		s.Hooks.CurrentPod = func(p *v1.Pod) *v1.Pod {
			cur, ok := d.Pod(p.Namespace, p.Name)
			if !ok {
				return nil
			}
			return cur
		}
	}
	e.Scheduler = s
	return e, nil
}

// BuildProfiles instantiates every profile's framework over snapshot, with
// handles built from the options and the driver. Errors wrap ErrConfig and
// name the profile field ("profiles[0].pluginConfig[1].args...").
func BuildProfiles(ctx context.Context, o Options, snap *schedcore.Snapshot, d Driver) (*Profiles, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if d.DRA == nil {
		d.DRA = schedcore.NewDRAManager()
		d.DRA.SetDeviceTaintRules(o.Features.DRADeviceTaints && o.Features.DRADeviceTaintRules)
	}
	return buildProfiles(ctx, o, d, snap, nil, nil)
}

// podGroups (the cache; nil: none) is what the handles' PodGroupManager
// reads.
func buildProfiles(ctx context.Context, o Options, d Driver, snap *schedcore.Snapshot, selectors func() *schedcore.SelectorSources, podGroups schedcore.PodGroupManager) (*Profiles, error) {
	cfg := o.Config
	ps := &Profiles{ByName: map[string]*schedruntime.Framework{}}
	par := 0
	if cfg.Parallelism != nil {
		par = int(*cfg.Parallelism)
	}
	hooks := d.Preemption
	if hooks.Offset == nil && o.UseSeed {
		// kube starts the preemption scan at a random node; seeded, the
		// engine does too, reproducibly. Unseeded it starts at 0.
		r := rand.New(rand.NewSource(o.Seed))
		hooks.Offset = func(n int32) int32 { return r.Int31n(n) }
	}
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		opts := []schedcore.HandleOption{
			schedcore.WithSeed(o.Seed + int64(i)),
			schedcore.WithLogger(o.Logger),
			schedcore.WithFeatures(o.Features),
			schedcore.WithBinder(d.Binder),
			schedcore.WithVolumeBinder(d.VolumeBinder),
			schedcore.WithObjects(d.Objects),
			schedcore.WithNominator(d.Nominator),
			schedcore.WithPreemption(hooks),
			schedcore.WithDRA(d.DRA),
			schedcore.WithClaimWriter(d.ClaimWriter),
		}
		if d.Clock != nil {
			opts = append(opts, schedcore.WithClock(d.Clock))
		}
		if d.Events != nil && p.SchedulerName != nil {
			opts = append(opts, schedcore.WithEvents(d.Events(*p.SchedulerName)))
		}
		if selectors != nil {
			opts = append(opts, schedcore.WithSelectorSources(selectors))
		}
		if podGroups != nil {
			opts = append(opts, schedcore.WithPodGroupManager(podGroups))
		}
		h := schedcore.NewHandle(snap, par, opts...)
		fw, err := schedruntime.NewFramework(ctx, o.Registry, p, h, schedruntime.FrameworkOptions{Recorder: d.Recorder, NoPostFilter: o.NoPreemption})
		if err != nil {
			return nil, configError{fmt.Errorf("profiles[%d]: %w", i, err)}
		}
		ps.ByName[fw.ProfileName()] = fw
		ps.Order = append(ps.Order, fw.ProfileName())
	}
	return ps, nil
}

// Load puts a cluster into the engine: its DRA objects into the DRA
// manager (FillDRA: with the template claims the resourceclaim controller
// would create, which changes cl's pods and claims; as listed with
// ClaimsAsListed), the rest into the
// cache (FillCache); it refreshes the snapshot and returns the pending
// pods of the engine's profiles in queue order. It fails with ErrNoNodes
// for a cluster without nodes.
func (e *Engine) Load(cl *snapshot.Cluster) ([]*v1.Pod, error) {
	if len(cl.Nodes) == 0 {
		return nil, ErrNoNodes
	}
	if e.Options.ClaimsAsListed {
		fillDRAObjects(e.DRA, cl)
	} else {
		FillDRA(e.DRA, cl)
	}
	pending := FillCache(e.Cache, cl, e.Profiles.ByName)
	// The queue observes the PodGroups before any member is queued, as
	// kube's PodGroup informer handler (AddPodGroup) would have.
	for _, pg := range cl.Workloads.PodGroups {
		e.Queue.AddPodGroup(e.Options.Logger, pg)
	}
	e.Cache.UpdateSnapshot(e.Snapshot)
	return pending, nil
}

// Prepare has every profile's plugins build the indexes they keep over
// the snapshot (schedcore.PreparePlugin), which their first cycle would
// build otherwise: explain calls it as part of loading, so that the first
// explanation costs what the later ones do.
func (e *Engine) Prepare(ctx context.Context) {
	for _, n := range e.Profiles.Order {
		e.Profiles.ByName[n].Prepare(ctx, e.Snapshot)
	}
}

// Framework returns the profile of the pod's schedulerName, nil if none.
func (e *Engine) Framework(pod *v1.Pod) *schedruntime.Framework {
	return e.Profiles.ByName[pod.Spec.SchedulerName]
}

// Explain runs one scheduling cycle of pod on the current snapshot with
// full diagnosis, with the options' tie-break (schedruntime.Explain).
func (e *Engine) Explain(ctx context.Context, fw *schedruntime.Framework, pod *v1.Pod) *schedruntime.Explanation {
	return schedruntime.Explain(ctx, fw, e.Snapshot, pod, e.Options.TieBreak())
}

// GatedBy returns the message and name of the PreEnqueue plugin that holds
// a pending pod out of activeQ, if one does.
func (e *Engine) GatedBy(ctx context.Context, p *v1.Pod) (msg, plugin string) {
	fw := e.Framework(p)
	if fw == nil {
		return "", ""
	}
	qpi, ok := e.Queue.GetPod(p.Name, p.Namespace)
	if group, member := schedcore.PodGroupNameOf(p); !ok && member {
		// A member waits in its group's entity, or, its PodGroup
		// unobserved, outside the queue's heaps: the PreEnqueue plugin
		// holding it says why.
		if qpi, ok = e.Queue.GetPodGroup(group, p.Namespace); !ok {
			for _, pl := range fw.PreEnqueuePlugins() {
				if st := pl.PreEnqueue(ctx, p); !st.IsSuccess() && slices.ContainsFunc(e.Queue.IncompletePodGroupPods(), func(q *v1.Pod) bool { return q.UID == p.UID }) {
					return st.Message(), pl.Name()
				}
			}
			return "", ""
		}
	}
	if !ok || !qpi.Gated() {
		return "", ""
	}
	for _, pl := range fw.PreEnqueuePlugins() {
		if pl.Name() == qpi.GatingPlugin {
			return pl.PreEnqueue(ctx, p).Message(), pl.Name()
		}
	}
	return "", ""
}

// PDBsOf returns a PreemptionHooks.PDBs over a fixed list.
func PDBsOf(pdbs []*policyv1.PodDisruptionBudget) func() []*policyv1.PodDisruptionBudget {
	return func() []*policyv1.PodDisruptionBudget { return pdbs }
}
