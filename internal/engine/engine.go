// Package engine assembles schedcore for the drivers: it turns a
// KubeSchedulerConfiguration and a plugin registry into profiles, feeds a
// cache from cluster objects, and wires the queue and scheduler loop. The
// dry-run, explain and run verbs differ only in what they pass in.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// LoadConfig reads, defaults and validates a KubeSchedulerConfiguration
// file; "" gives kube-scheduler v1.37's defaults. Errors name the file and
// field.
func LoadConfig(path string) (*configv1.KubeSchedulerConfiguration, error) {
	cfg := &configv1.KubeSchedulerConfiguration{}
	if path != "" {
		var err error
		if cfg, err = schedcore.LoadConfigFile(path); err != nil {
			return nil, err
		}
	}
	schedcore.SetConfigDefaults(cfg, plugins.DefaultPlugins)
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

// HandleOptions are what each profile's handle gets from the driver.
type HandleOptions struct {
	Binder    schedcore.Binder
	Events    schedcore.EventRecorder
	Nominator schedcore.PodNominator
	Recorder  schedcore.MetricsRecorder
	// VolumeBinder receives VolumeBinding's PreBind writes; nil: none.
	VolumeBinder schedcore.VolumeBinder
	Seed         int64
	Features     schedcore.Features
	// Clock, when set, replaces the handles' real clock (Permit timeouts
	// and plugin time follow it).
	Clock clock.WithTicker
	// Objects lists pods and other objects for plugins that need them.
	Objects schedcore.ObjectLister
	// Preemption is the driver's side of preemption (PDBs, evictions).
	Preemption schedcore.PreemptionHooks
}

// Profiles are the built frameworks by schedulerName, with their order.
type Profiles struct {
	ByName map[string]*schedcore.Framework
	Order  []string
}

// BuildProfiles instantiates every profile's framework over snapshot.
// Errors name the profile field ("profiles[0].pluginConfig[1].args...").
func BuildProfiles(ctx context.Context, cfg *configv1.KubeSchedulerConfiguration, r schedcore.Registry, snap *schedcore.Snapshot, o HandleOptions) (*Profiles, error) {
	ps := &Profiles{ByName: map[string]*schedcore.Framework{}}
	par := 16
	if cfg.Parallelism != nil {
		par = int(*cfg.Parallelism)
	}
	if o.Features == (schedcore.Features{}) {
		o.Features = schedcore.DefaultFeatures
	}
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		h := schedcore.NewHandle(snap, par)
		h.Binder, h.Events, h.Nominator, h.Features = o.Binder, o.Events, o.Nominator, o.Features
		h.VolumeBinder = o.VolumeBinder
		h.Objects = o.Objects
		if o.Clock != nil {
			h.Clock = o.Clock
		}
		h.Preemption = o.Preemption
		h.Rand = rand.New(rand.NewSource(o.Seed + int64(i)))
		fw, err := schedcore.NewFramework(ctx, r, p, h, schedcore.FrameworkOptions{Recorder: o.Recorder})
		if err != nil {
			return nil, configError{fmt.Errorf("profiles[%d]: %w", i, err)}
		}
		ps.ByName[fw.ProfileName()] = fw
		ps.Order = append(ps.Order, fw.ProfileName())
	}
	return ps, nil
}

// SetNominator points every profile's handle at the nominator, and at it
// as the activator when it is one (the scheduling queue is both).
func (p *Profiles) SetNominator(n schedcore.PodNominator) {
	a, _ := n.(schedcore.PodActivator)
	for _, fw := range p.ByName {
		fw.Handle().Nominator = n
		fw.Handle().Activator = a
	}
}

// FillCache adds a cluster's nodes, namespaces, storage objects, selector
// sources and bound pods to the cache, and returns the pending pods of the
// given profiles in queue order (priority, creation time, namespace/name). Pods that
// Succeeded or Failed hold no resources and are left out. Pods without a
// UID get a stable one derived from namespace/name.
func FillCache(c *schedcore.Cache, cl *snapshot.Cluster, profiles map[string]*schedcore.Framework) []*v1.Pod {
	for _, n := range cl.Nodes {
		c.AddNode(n)
	}
	for _, ns := range cl.Namespaces {
		c.AddNamespace(ns)
	}
	c.SetStorage(schedcore.NewStorageState(cl.PVCs, cl.PVs, cl.StorageClasses, cl.CSINodes, cl.CSIDrivers, cl.CSIStorageCapacities))
	c.SetSelectorSources(&schedcore.SelectorSources{Services: cl.Services, ReplicationControllers: cl.ReplicationControllers, ReplicaSets: cl.ReplicaSets, StatefulSets: cl.StatefulSets})
	var pending []*v1.Pod
	for _, p := range cl.Pods {
		if p.UID == "" {
			p.UID = types.UID("snapshot-" + p.Namespace + "-" + p.Name)
		}
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if p.Spec.NodeName != "" {
			_ = c.AddPod(p)
			continue
		}
		if _, ok := profiles[p.Spec.SchedulerName]; ok && Pending(p) {
			pending = append(pending, p)
		}
	}
	SortQueueOrder(pending)
	return pending
}

// SortQueueOrder sorts pods as the conformance fixtures' queue does:
// priority descending, then creationTimestamp, then namespace/name.
func SortQueueOrder(pods []*v1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		pi, pj := schedcore.PodPriority(pods[i]), schedcore.PodPriority(pods[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := pods[i].CreationTimestamp.Time, pods[j].CreationTimestamp.Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return schedcore.PodName(pods[i]) < schedcore.PodName(pods[j])
	})
}

// LowestName is the default tie-break: the lowest node name.
func LowestName(tied []string) string { return tied[0] }

// SeededTieBreak picks among tied nodes with a seeded source.
func SeededTieBreak(seed int64) schedcore.TieBreak {
	r := rand.New(rand.NewSource(seed))
	return func(tied []string) string { return tied[r.Intn(len(tied))] }
}
