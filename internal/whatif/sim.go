// Package whatif is the offline cluster that capacity planning schedules
// into: an engine.Offline loaded with the cluster's nodes and bound pods
// (pending pods are left out: they are not part of the question), into
// which copies of a workload are placed one batch at a time through the
// real scheduling loop (queue, PreEnqueue, the cycle, Permit, binding),
// each committed before the next. For a pod whose every rejecting plugin
// is node-local (schedcore.NodeLocalPlugin), Fill counts how many copies
// fit node by node with the same Filter plugins instead.
//
// This is the only file of capacity planning that drives the engine.
package whatif

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
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
	// InPlace lets the engine fill in what the cluster's bound pods lack
	// (UIDs) in the cluster's own objects and share their equal parts
	// (engine.Options.InPlace) rather than copy every pod.
	InPlace bool
}

// Sim is the engine over an in-memory cluster. It is not safe for
// concurrent use.
type Sim struct {
	off *engine.Offline
	// What the current Place call saw.
	placed []Placement
	failed map[string]Failure
	// placements are the last placements each pod group's cycle tried.
	placements map[string][]schedruntime.PlacementOutcome
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
	// ForGroup is set when the pod was rejected for its gang's sake.
	ForGroup bool
}

// New loads the cluster's nodes, storage objects and bound pods into a
// fresh engine. The cluster is not modified.
func New(ctx context.Context, cl *snapshot.Cluster, o Options) (*Sim, error) {
	s := &Sim{failed: map[string]Failure{}}
	work := *cl
	work.Pods = make([]*v1.Pod, 0, len(cl.Pods))
	for _, p := range cl.Pods {
		if p.Spec.NodeName != "" {
			work.Pods = append(work.Pods, p)
		}
	}
	off, _, err := engine.NewOffline(ctx, &work, engine.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, Logger: o.Logger, InPlace: o.InPlace},
		engine.Observer{
			Placed: func(pod *v1.Pod, node string, _ int, _ schedruntime.ScheduleResult) {
				s.placed = append(s.placed, Placement{Pod: pod, Node: node})
				delete(s.failed, key(pod))
			},
			Failed: func(pod *v1.Pod, f engine.Failure) {
				// A gang member rejected for its siblings' sake after a
				// failure of its own keeps its own: that is what stops
				// the group.
				if old, ok := s.failed[key(pod)]; ok && f.ForGroup && !old.ForGroup {
					return
				}
				s.failed[key(pod)] = Failure{Pod: pod, Message: f.Status.Message(), Plugins: f.Plugins, ForGroup: f.ForGroup}
			},
		})
	if err != nil {
		return nil, err
	}
	s.off = off
	s.placements = map[string][]schedruntime.PlacementOutcome{}
	off.Scheduler.Hooks.Placements = func(g *schedcore.QueuedPodGroupInfo, outcomes []schedruntime.PlacementOutcome) {
		s.placements[g.Namespace+"/"+g.Name] = append([]schedruntime.PlacementOutcome(nil), outcomes...)
	}
	return s, nil
}

func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// Framework returns the profile that schedules pod.
func (s *Sim) Framework(pod *v1.Pod) (*schedruntime.Framework, error) {
	fw := s.off.Framework(pod)
	if fw == nil {
		return nil, fmt.Errorf("schedulerName %q is not a profile of the configuration: %w", pod.Spec.SchedulerName, ErrUnknownProfile)
	}
	return fw, nil
}

// AddObject adds an object the plugins read through Handle.Objects (a
// PodGroup for a gang's copy).
func (s *Sim) AddObject(u *unstructured.Unstructured) { s.off.AddObject(u) }

// AddPodGroup adds a scheduling.k8s.io/v1beta1 PodGroup (a copy's, with
// GenericWorkload on), delivered to the cache and the queue as kube's
// informer delivers a new one. It is an error if it exists.
func (s *Sim) AddPodGroup(pg *schedulingv1beta1.PodGroup) error { return s.off.AddPodGroup(pg) }

// HasPodGroup reports whether the PodGroup namespace/name exists.
func (s *Sim) HasPodGroup(namespace, name string) bool {
	for _, g := range s.off.PodGroups() {
		if g.Namespace == namespace && g.Name == name {
			return true
		}
	}
	return false
}

// PodGroup returns the PodGroup namespace/name as it is now (with the
// status the pod-group cycles wrote), or nil.
func (s *Sim) PodGroup(namespace, name string) *schedulingv1beta1.PodGroup {
	for _, g := range s.off.PodGroups() {
		if g.Namespace == namespace && g.Name == name {
			return g
		}
	}
	return nil
}

// Placements returns the placements the last pod-group cycle of the
// PodGroup namespace/name tried (TopologyAwareWorkloadScheduling), in the
// generator's order, or nil.
func (s *Sim) Placements(namespace, name string) []schedruntime.PlacementOutcome {
	return s.placements[namespace+"/"+name]
}

// AddPVC adds a claim (a StatefulSet copy's, created before its pod).
func (s *Sim) AddPVC(pvc *v1.PersistentVolumeClaim) { s.off.AddPVC(pvc) }

// HasPod reports whether a pod namespace/name exists (pending pods of the
// cluster aside).
func (s *Sim) HasPod(namespace, name string) bool {
	_, ok := s.off.Pod(namespace, name)
	return ok
}

// Place queues pods (in the order given, which is their queue order among
// equals) and runs the scheduling loop until nothing is left to try. It
// returns the placements in order and the pods left pending with their
// last failure; pods left pending are forgotten (taken out of the queue
// and the in-memory API), placed ones stay bound.
func (s *Sim) Place(ctx context.Context, pods []*v1.Pod) ([]Placement, []Failure, error) {
	s.placed, s.failed = nil, map[string]Failure{}
	for _, p := range pods {
		if err := s.off.Add(p); err != nil {
			return nil, nil, err
		}
	}
	if err := s.off.Run(ctx); err != nil {
		return nil, nil, err
	}
	var failed []Failure
	for _, p := range pods {
		if cur, ok := s.off.Pod(p.Namespace, p.Name); ok && cur.Spec.NodeName != "" {
			continue
		}
		f, ok := s.failed[key(p)]
		if !ok {
			f = Failure{Pod: p, Message: s.gateMessage(ctx, p)}
		}
		failed = append(failed, f)
		s.off.Delete(p.Namespace, p.Name)
	}
	return s.placed, failed, nil
}

// gateMessage says why a pod never got a cycle: the PreEnqueue plugin that
// holds it (scheduling gates, a gang short of members).
func (s *Sim) gateMessage(ctx context.Context, p *v1.Pod) string {
	if len(p.Spec.SchedulingGates) > 0 {
		return "Scheduling is blocked due to non-empty scheduling gates"
	}
	if cur, ok := s.off.Pod(p.Namespace, p.Name); ok {
		if msg, plugin := s.off.GatedBy(ctx, cur); plugin != "" {
			return msg
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
	snap := s.off.Current()
	state := schedcore.NewCycleState()
	res, st, _ := fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() {
		return nil, false, nil
	}
	var nodes []*schedcore.NodeInfo
	for _, ni := range snap.List() {
		if res.AllNodes() || res.NodeNames.Has(ni.Name()) {
			nodes = append(nodes, ni)
		}
	}
	features := s.off.Options.Features
	pi := schedcore.NewPodInfo(pod.DeepCopy())
	// Computed here, once: the workers below share pi.
	pi.Resource(features)
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
			ni.AddPodInfo(pi, features)
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
func (c *Copies) Bind(copy *v1.Pod, node string) error { return c.BindShared(copy, node, 1) }

// BindShared commits n copies to node as the one object copy: the node
// counts n pods, all of them copy (its name, its UID), and the simulation
// knows copy's name only. It is for copies that nothing names one by one
// afterwards (engine.Offline.AddCopy).
func (c *Copies) BindShared(copy *v1.Pod, node string, n int) error {
	copy.Spec.NodeName = node
	return c.s.off.AddCopy(copy, c.tmpl, n)
}

// Nodes returns the nodes as the engine sees them now, in the snapshot's
// order (read-only).
func (s *Sim) Nodes() []*schedcore.NodeInfo { return s.off.Current().List() }

// Explainer returns an explanation state over the simulation as it is now
// (explain.NewStateOver): for saying why the next copy fits nowhere and
// what would make it fit, without loading the cluster again. base lists
// the cluster's pods.
func (s *Sim) Explainer(base *snapshot.Cluster, o explain.Options) *explain.State {
	s.off.Current()
	return explain.NewStateOver(base, s.off.Engine, o)
}

// WithPending brings pod into the cluster as a pending pod, its template
// claims created as the resourceclaim controller would, calls fn with the
// pod as the cluster holds it (those claims named in its status) before
// any cycle of it runs, and takes it out again, releasing its claims.
// Place forgets a copy that fit nowhere, claims and all; this is how it is
// explained as its cycle saw it.
func (s *Sim) WithPending(pod *v1.Pod, fn func(*v1.Pod) error) error {
	if err := s.off.Add(pod); err != nil {
		return err
	}
	defer s.off.Delete(pod.Namespace, pod.Name)
	cur, ok := s.off.Pod(pod.Namespace, pod.Name)
	if !ok {
		return fmt.Errorf("pod %s/%s: not in the simulation once added", pod.Namespace, pod.Name)
	}
	return fn(cur)
}

// DRA returns the simulation's DRA objects and allocations (read-only).
func (s *Sim) DRA() *schedcore.DRAManager { return s.off.Engine.DRA }

// Close releases the queue.
func (s *Sim) Close() { s.off.Close() }
