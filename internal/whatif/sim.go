// Package whatif is the offline cluster that capacity planning schedules
// into. The cluster's nodes and bound pods are loaded once into the
// engine's cache (pending pods are left out: they are not part of the
// question); then nodes are added and pods placed one batch at a time
// through the real scheduling loop (queue, PreEnqueue, the cycle, Permit,
// binding) with an in-memory binder, each placement committed before the
// next, preemption off. For a pod whose every rejecting plugin is
// node-local (schedcore.NodeLocalPlugin), Fill counts how many copies fit
// node by node with the same Filter plugins instead.
//
// This file is the only one that drives the engine; the rest of the
// package is state.
package whatif

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
)

// ErrUnknownProfile is returned for a pod whose schedulerName is not one of
// the configuration's profiles.
var ErrUnknownProfile = errors.New("no such scheduler profile")

// Options configure a Sim.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration.
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (in-tree plus extra).
	Registry schedcore.Registry
	// Features are the feature gates (zero value: defaults).
	Features schedcore.Features
	// Logger receives debug logs; zero discards.
	Logger logr.Logger
}

// Sim is the engine over an in-memory cluster. It is not safe for
// concurrent use.
type Sim struct {
	o        Options
	cache    *schedcore.Cache
	snap     *schedcore.Snapshot
	profiles *engine.Profiles
	q        *queue.PriorityQueue
	sched    *schedcore.Scheduler
	clk      *clocktesting.FakeClock
	st       *store
	objs     *objects
	// pvcs are the claims added (AddPVC).
	pvcs []*v1.PersistentVolumeClaim

	// What the current Place call saw.
	placed []Placement
	failed map[string]Failure
}

// Placement is a pod bound to a node, in the order of the bindings.
type Placement struct {
	Pod  *v1.Pod
	Node string
}

// Failure is a pod left pending with its last scheduling failure.
type Failure struct {
	Pod *v1.Pod
	// Message is kube-scheduler's FitError text (or the gate's message
	// for a pod that never got a cycle).
	Message string
	// Plugins rejected the pod.
	Plugins []string
}

// epoch is where the fake clock starts; only differences matter.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// New loads the cluster's nodes, storage objects and bound pods into a
// fresh engine. The cluster is not modified.
func New(ctx context.Context, cl *snapshot.Cluster, o Options) (*Sim, error) {
	if o.Features == (schedcore.Features{}) {
		o.Features = schedcore.DefaultFeatures
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	s := &Sim{o: o, cache: schedcore.NewCache(o.Features), snap: schedcore.NewEmptySnapshot(),
		clk: clocktesting.NewFakeClock(epoch), st: newStore()}
	s.objs = newObjects(s.st, cl.Others)
	vb := &volumeBinder{}
	hooks := schedcore.PreemptionHooks{PDBs: func() []*policyv1.PodDisruptionBudget { return cl.PDBs }}
	var err error
	s.profiles, err = engine.BuildProfiles(ctx, o.Config, o.Registry, s.snap, engine.HandleOptions{
		Binder: binder{s.st}, VolumeBinder: vb, Features: o.Features, Clock: s.clk, Objects: s.objs, Preemption: hooks})
	if err != nil {
		return nil, err
	}
	for _, fw := range s.profiles.ByName {
		fw.DisablePostFilter()
	}
	work := *cl
	work.Pods = make([]*v1.Pod, 0, len(cl.Pods))
	for _, p := range cl.Pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if p.UID == "" {
			cp := *p
			p = &cp
		}
		work.Pods = append(work.Pods, p)
	}
	engine.FillCache(s.cache, &work, s.profiles.ByName)
	for _, p := range work.Pods {
		if p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			s.st.put(p)
		}
	}
	s.cache.UpdateSnapshot(s.snap)
	vb.state = s.snap.Storage

	cfg := o.Config
	first := s.profiles.ByName[s.profiles.Order[0]]
	s.q = queue.New(first.QueueSortLess(), s.profiles.ByName,
		queue.WithClock(s.clk),
		queue.WithPodInitialBackoffDuration(time.Duration(*cfg.PodInitialBackoffSeconds)*time.Second),
		queue.WithPodMaxBackoffDuration(time.Duration(*cfg.PodMaxBackoffSeconds)*time.Second),
		queue.WithLogger(o.Logger))
	s.profiles.SetNominator(s.q)
	var pct int32
	if cfg.PercentageOfNodesToScore != nil {
		pct = *cfg.PercentageOfNodesToScore
	}
	s.sched = schedcore.NewScheduler(s.cache, s.q, s.profiles.ByName, s.snap, &schedcore.Algorithm{PercentageOfNodesToScore: pct})
	s.sched.SyncBinding = true
	s.sched.Clock = s.clk
	s.sched.Logger = o.Logger
	s.sched.Hooks = schedcore.Hooks{
		CurrentPod: func(p *v1.Pod) *v1.Pod { return s.st.get(p) },
		Scheduled: func(_ context.Context, _ *schedcore.Framework, qpi *schedcore.QueuedPodInfo, node string, _ schedcore.ScheduleResult) {
			bound := s.st.get(qpi.Pod)
			if err := s.cache.AddPod(bound); err != nil {
				s.o.Logger.Error(err, "confirming binding", "pod", schedcore.PodName(bound))
			}
			s.q.AssignedPodAdded(s.o.Logger, bound)
			s.placed = append(s.placed, Placement{Pod: bound, Node: node})
			delete(s.failed, schedcore.PodKey(qpi.Pod))
		},
		Failed: func(_ context.Context, _ *schedcore.Framework, qpi *schedcore.QueuedPodInfo, _ string, status *schedcore.Status, _ *schedcore.NominatingInfo) {
			s.failed[schedcore.PodKey(qpi.Pod)] = Failure{Pod: qpi.Pod, Message: status.Message(),
				Plugins: sets.List(qpi.UnschedulablePlugins.Union(qpi.PendingPlugins))}
		},
	}
	return s, nil
}

// Framework returns the profile that schedules pod.
func (s *Sim) Framework(pod *v1.Pod) (*schedcore.Framework, error) {
	fw := s.profiles.ByName[pod.Spec.SchedulerName]
	if fw == nil {
		return nil, fmt.Errorf("schedulerName %q is not a profile of the configuration: %w", pod.Spec.SchedulerName, ErrUnknownProfile)
	}
	return fw, nil
}

// AddNode adds a node (a hypothetical one from a template).
func (s *Sim) AddNode(n *v1.Node) { s.cache.AddNode(n) }

// AddObject adds an object the plugins read through Handle.Objects (a
// PodGroup for a gang's copy).
func (s *Sim) AddObject(u *unstructured.Unstructured) { s.objs.add(u) }

// Place queues pods (in the order given, which is their queue order among
// equals) and runs the scheduling loop until nothing is left to try. It
// returns the placements in order and the pods left pending with their
// last failure; pods left pending are forgotten (taken out of the queue
// and the in-memory API), placed ones stay bound.
func (s *Sim) Place(ctx context.Context, pods []*v1.Pod) ([]Placement, []Failure, error) {
	s.placed, s.failed = nil, map[string]Failure{}
	for _, p := range pods {
		if p.UID == "" {
			p.UID = types.UID("whatif-" + p.Namespace + "-" + p.Name)
		}
		s.st.put(p)
		s.q.Add(s.o.Logger, p)
		s.clk.Step(time.Microsecond)
	}
	if err := dryrun.Loop(ctx, s.sched, s.q, s.clk, s.profiles, func() int { return len(s.placed) }); err != nil {
		return nil, nil, err
	}
	var failed []Failure
	for _, p := range pods {
		cur := s.st.get(p)
		if cur != nil && cur.Spec.NodeName != "" {
			continue
		}
		f, ok := s.failed[schedcore.PodKey(p)]
		if !ok {
			f = Failure{Pod: p, Message: s.gateMessage(ctx, p)}
		}
		failed = append(failed, f)
		s.q.Delete(p)
		s.st.remove(p)
	}
	return s.placed, failed, nil
}

// gateMessage says why a pod never got a cycle: the PreEnqueue plugin that
// holds it (scheduling gates, a gang short of members).
func (s *Sim) gateMessage(ctx context.Context, p *v1.Pod) string {
	if fw := s.profiles.ByName[p.Spec.SchedulerName]; fw != nil {
		if st := fw.RunPreEnqueuePlugins(ctx, p); !st.IsSuccess() {
			if len(p.Spec.SchedulingGates) > 0 {
				return "Scheduling is blocked due to non-empty scheduling gates"
			}
			return st.Message()
		}
	}
	return "waiting in the scheduling queue (never attempted)"
}

// NodeCount is how many copies of a pod fit on one node.
type NodeCount struct {
	Node  string
	Count int
}

// Fill counts, for a pod whose profile is node-local for it
// (schedcore.Framework.NodeLocal), how many copies fit on each node, up to
// limit per node (limit <= 0: no limit but the node's own), by running the
// profile's Filter plugins on the node with the copies added one at a time
// after one PreFilter. ok is false when the shortcut does not apply (a
// plugin couples nodes, PreEnqueue holds the pod, PreFilter rejects it):
// place the copies one at a time instead. Nothing is committed.
//
// Why the sum is the count of placements until the first failure: when
// every rejecting plugin is node-local, a copy placed on one node changes
// neither the PreFilter state nor any other node's verdict, so each node
// ends up with as many copies as fit on it whatever order the scores
// choose, and the first failure comes when every node is full.
func (s *Sim) Fill(ctx context.Context, pod *v1.Pod, limit int) (counts []NodeCount, ok bool, err error) {
	fw, err := s.Framework(pod)
	if err != nil {
		return nil, false, err
	}
	if !fw.NodeLocal(pod) {
		return nil, false, nil
	}
	if st := fw.RunPreEnqueuePlugins(ctx, pod); !st.IsSuccess() {
		return nil, false, nil
	}
	s.cache.UpdateSnapshot(s.snap)
	state := schedcore.NewCycleState()
	res, st, _ := fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() {
		return nil, false, nil
	}
	var nodes []*schedcore.NodeInfo
	for _, ni := range s.snap.List() {
		if res.AllNodes() || res.NodeNames.Has(ni.Name()) {
			nodes = append(nodes, ni)
		}
	}
	placed := pod.DeepCopy()
	pi := schedcore.NewPodInfo(placed)
	per := make([]int, len(nodes))
	errs := make([]error, len(nodes))
	fw.Handle().Parallelizer().Until(ctx, len(nodes), func(i int) {
		ni := nodes[i].Clone()
		for limit <= 0 || per[i] < limit {
			st := fw.RunFilterPlugins(ctx, state, pod, ni)
			if !st.IsSuccess() {
				if st.Code() == schedcore.Error {
					errs[i] = st.AsError()
				}
				return
			}
			ni.AddPodInfo(pi, s.o.Features)
			per[i]++
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	for i, e := range errs {
		if e != nil {
			return nil, false, fmt.Errorf("node %s: %w", nodes[i].Name(), e)
		}
	}
	for i, ni := range nodes {
		if per[i] > 0 {
			counts = append(counts, NodeCount{Node: ni.Name(), Count: per[i]})
		}
	}
	return counts, true, nil
}

// Copies commits copies of one pod to nodes without scheduling cycles, as
// the bindings the cycle would choose are committed: for the copies Fill
// counted. The copies must differ from the pod only in name and UID; they
// are taken over (their node is set).
type Copies struct {
	s    *Sim
	tmpl *schedcore.PodInfo
}

// Copies starts committing copies of pod.
func (s *Sim) Copies(pod *v1.Pod) *Copies {
	return &Copies{s: s, tmpl: schedcore.NewPodInfo(pod)}
}

// Bind commits one copy to node.
func (c *Copies) Bind(copy *v1.Pod, node string) error {
	if copy.UID == "" {
		copy.UID = types.UID("whatif-" + copy.Namespace + "-" + copy.Name)
	}
	copy.Spec.NodeName = node
	c.s.st.put(copy)
	return c.s.cache.AddPodCopy(copy, c.tmpl)
}

// Nodes returns the nodes as the engine sees them now, in the snapshot's
// order (read-only).
func (s *Sim) Nodes() []*schedcore.NodeInfo {
	s.cache.UpdateSnapshot(s.snap)
	return s.snap.List()
}

// AddPVC adds a claim (a StatefulSet copy's, created before its pod).
func (s *Sim) AddPVC(pvc *v1.PersistentVolumeClaim) {
	s.cache.UpdateSnapshot(s.snap)
	s.snap.Storage.PutPVC(pvc)
	s.pvcs = append(s.pvcs, pvc)
}

// HasPod reports whether a pod namespace/name exists (pending pods of the
// cluster aside).
func (s *Sim) HasPod(namespace, name string) bool {
	_, ok := s.st.names[namespace+"/"+name]
	return ok
}

// Cluster returns the cluster as it is now: base's objects with the
// current nodes and pods and the objects added (for explaining a pod
// against it).
func (s *Sim) Cluster(base *snapshot.Cluster) *snapshot.Cluster {
	cl := *base
	cl.Others = append(append([]*unstructured.Unstructured(nil), base.Others...), s.objs.raw...)
	cl.PVCs = append(append([]*v1.PersistentVolumeClaim(nil), base.PVCs...), s.pvcs...)
	cl.Nodes = nil
	for _, ni := range s.Nodes() {
		cl.Nodes = append(cl.Nodes, ni.Node())
	}
	cl.Pods = make([]*v1.Pod, 0, len(s.st.pods))
	for _, p := range s.st.pods {
		cl.Pods = append(cl.Pods, p)
	}
	return &cl
}

// Explainer returns an explanation state over the simulation as it is now
// (explain.NewStateOver): for saying why the next copy fits nowhere and
// what would make it fit, without loading the cluster again. base gives
// the cluster's other objects.
func (s *Sim) Explainer(base *snapshot.Cluster, o explain.Options) *explain.State {
	s.cache.UpdateSnapshot(s.snap)
	return explain.NewStateOver(s.Cluster(base), s.cache, s.snap, s.profiles, o)
}

// Close releases the queue.
func (s *Sim) Close() { s.q.Close() }
