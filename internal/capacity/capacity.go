// Package capacity answers how many more copies of a workload fit in a
// cluster, and how many template nodes it takes to make a number of them
// fit, by placing the copies through the real scheduling cycle one after
// another until the first that fits nowhere, as cluster-capacity does: the
// configured profile, preemption off (DefaultPreemption disabled), ties to
// the lowest node name. Pending pods of the cluster are left out.
package capacity

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/internal/whatif"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ZoneLabel is the label Capacity's per-zone counts group nodes by.
const ZoneLabel = v1.LabelTopologyZone

// ErrNoNodes is returned for a cluster without nodes and no template
// nodes to add.
var ErrNoNodes = errors.New("the cluster has no nodes")

// ErrNoCoscheduling is returned for a gang whose profile does not run
// Coscheduling: its pods would be scheduled one by one.
var ErrNoCoscheduling = errors.New("a gang needs the Coscheduling plugin in its profile")

// Options tune a capacity run.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration;
	// DefaultPreemption is turned off in a copy.
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (in-tree plus extra).
	Registry schedcore.Registry
	// Features are the feature gates (zero value: defaults).
	Features schedcore.Features
	// Max caps the count of a spec without Replicas (0: no cap).
	Max int
	// Template is the node template; AddNodes copies of it are added.
	Template *v1.Node
	AddNodes int
	// MinNodes searches the fewest template nodes with which every spec
	// gets its Replicas.
	MinNodes bool
	// GroupBy are node labels to count the copies by, beside the zone.
	GroupBy []string
	// Cycles places every copy through the scheduling cycle even when
	// the node-local count applies (slower; for checking it).
	Cycles bool
	// Nearest is how many of the nearest rejected nodes get "what would
	// make it fit" for the copy that stops a count (0: 3; negative: none).
	Nearest int
	// Source is recorded in the report ("snapshot" when empty).
	Source string
	// InPlace: the run may fill in what the cluster's pods lack (UIDs)
	// and share their equal parts in place (engine.Options.InPlace); the
	// report is the same. Without it the cluster is not modified.
	InPlace bool
	// Progress, when set, is told about the work as it goes.
	Progress func(Progress)
	// Placed, when set, is told of each copy placed by a cycle, in order
	// (copies counted node by node are not placed one at a time).
	Placed func(spec, pod, node string)
}

// Progress is where a run is.
type Progress struct {
	// Spec is the spec being placed; Placed the copies so far; Target the
	// copies wanted (0: as many as fit).
	Spec           string
	Placed, Target int
	// Nodes is the template node count being evaluated by --min-nodes
	// (-1 outside the search); with Spec empty, its evaluation starts.
	Nodes int
}

// Run counts the specs' copies against the cluster and returns the report.
// The cluster (unless o.InPlace) and the specs are not modified.
func Run(ctx context.Context, cl *snapshot.Cluster, specs []*Spec, o Options) (*report.Capacity, error) {
	return run(ctx, cl, specs, o, false)
}

// run is Run; noShare makes every copy its own pod (runner.noShare).
func run(ctx context.Context, cl *snapshot.Cluster, specs []*Spec, o Options, noShare bool) (*report.Capacity, error) {
	if len(cl.Nodes) == 0 && (o.Template == nil || (o.AddNodes == 0 && !o.MinNodes)) {
		return nil, ErrNoNodes
	}
	if o.Nearest == 0 {
		o.Nearest = explain.DefaultNearest
	}
	o.Config = withoutPreemption(o.Config)
	r := &runner{o: o, base: withControllers(cl, specs), specs: specs, noShare: noShare}
	added := o.AddNodes
	var search *report.MinNodes
	if o.MinNodes {
		var err error
		if search, err = r.minNodes(ctx); err != nil {
			return nil, err
		}
		added = search.NodesNeeded
		r.sparse = true
	}
	ev, err := r.evaluate(ctx, added, true)
	if err != nil {
		return nil, err
	}
	rep := &report.Capacity{APIVersion: report.CapacityAPIVersion, Kind: "Capacity", Source: o.Source,
		Nodes: len(cl.Nodes), AddedNodes: added, Specs: ev.specs, MinNodes: search, Leftover: ev.leftover, Complete: true}
	if rep.Source == "" {
		rep.Source = "snapshot"
	}
	if o.Template != nil {
		rep.NodeTemplate = o.Template.Name
	}
	for _, s := range ev.specs {
		if s.Replicas > 0 && s.Count < s.Replicas {
			rep.Complete = false
		}
	}
	return rep, nil
}

// withoutPreemption returns a copy of cfg with DefaultPreemption disabled
// in every profile, as `postFilter: {disabled: [{name:
// DefaultPreemption}]}` would.
func withoutPreemption(cfg *configv1.KubeSchedulerConfiguration) *configv1.KubeSchedulerConfiguration {
	c := cfg.DeepCopy()
	for i := range c.Profiles {
		p := &c.Profiles[i]
		if p.Plugins == nil {
			p.Plugins = &configv1.Plugins{}
		}
		pf := &p.Plugins.PostFilter
		enabled := pf.Enabled[:0]
		for _, e := range pf.Enabled {
			if e.Name != names.DefaultPreemption {
				enabled = append(enabled, e)
			}
		}
		pf.Enabled = enabled
		pf.Disabled = append(pf.Disabled, configv1.Plugin{Name: names.DefaultPreemption})
	}
	return c
}

// withControllers returns a copy of cl with the ReplicaSets and
// StatefulSets the specs' controllers have (or would create) before their
// pods, which kube-scheduler's default spreading reads.
func withControllers(cl *snapshot.Cluster, specs []*Spec) *snapshot.Cluster {
	c := *cl
	c.ReplicaSets = append(c.ReplicaSets[:len(c.ReplicaSets):len(c.ReplicaSets)], nil)[:len(c.ReplicaSets)]
	c.StatefulSets = append(c.StatefulSets[:len(c.StatefulSets):len(c.StatefulSets)], nil)[:len(c.StatefulSets)]
	for _, s := range specs {
		if s.ReplicaSet != nil {
			c.ReplicaSets = append(c.ReplicaSets, s.ReplicaSet)
		}
		if s.StatefulSet != nil {
			c.StatefulSets = append(c.StatefulSets, s.StatefulSet)
		}
	}
	return &c
}

type runner struct {
	o     Options
	base  *snapshot.Cluster
	specs []*Spec
	// sparse lets the last spec's count skip where its copies land (the
	// report of --min-nodes).
	sparse bool
	// noShare makes every copy its own pod object (shareCopies): tests
	// compare the two.
	noShare bool
}

// evaluation is one run of every spec with a number of template nodes.
type evaluation struct {
	specs    []report.CapacitySpec
	leftover report.Leftover
}

// evaluate places every spec in order on a fresh copy of the cluster with
// added template nodes. detail adds the per-zone counts, the nearest
// nodes' gaps and the leftover.
func (r *runner) evaluate(ctx context.Context, added int, detail bool) (*evaluation, error) {
	sim, err := r.newSim(ctx, added)
	if err != nil {
		return nil, err
	}
	defer sim.Close()
	ev := &evaluation{}
	for _, s := range r.specs {
		c := &counter{r: r, sim: sim, spec: s, added: added, last: s == r.specs[len(r.specs)-1]}
		res, err := c.count(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Name, err)
		}
		if detail {
			if err := c.describe(ctx, res); err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Name, err)
			}
		}
		ev.specs = append(ev.specs, *res)
	}
	if detail {
		ev.leftover = leftover(sim.Nodes(), sim.DRA())
		for _, sp := range ev.specs {
			if sp.NodesNote != "" {
				ev.leftover.Note = fmt.Sprintf("without the %d copies of %s, whose landing was not worked out", sp.Count, sp.Name)
			}
		}
		for _, sp := range ev.specs {
			bound := 0
			for _, o := range sp.NextCopy {
				bound += o.Bound
			}
			if bound > 0 {
				// Members of the copy that stopped the count that kube
				// binds all the same (a met quorum, a Workload's other
				// group) hold their room.
				ev.leftover.Note = fmt.Sprintf("with the %d members of %s's next copy that kube binds, which do not count", bound, sp.Name)
			}
		}
	}
	return ev, nil
}

// newSim loads the cluster with added template nodes into a simulation.
func (r *runner) newSim(ctx context.Context, added int) (*whatif.Sim, error) {
	cl := *r.base
	cl.Nodes = append(cl.Nodes[:len(cl.Nodes):len(cl.Nodes)], TemplateNodes(r.o.Template, added, r.base.Nodes)...)
	return whatif.New(ctx, &cl, whatif.Options{Config: r.o.Config, Registry: r.o.Registry, Features: r.o.Features, InPlace: r.o.InPlace})
}

// landingBudget is how many copies --min-nodes's report places one by one
// to say where they land; beyond it, a node-local count says only how
// many.
const landingBudget = 5000

// counter counts one spec's copies.
type counter struct {
	r     *runner
	sim   *whatif.Sim
	spec  *Spec
	added int
	// last is set for the last spec.
	last bool
	// next is the copy that failed, or the one that would come next.
	next []*v1.Pod
	// seq numbers the copies made so far.
	seq int
	// copyNames are the PodGroup names of the last copy (pod-group cycle).
	copyNames []string
}

func (c *counter) count(ctx context.Context) (*report.CapacitySpec, error) {
	s := c.spec
	res := &report.CapacitySpec{Name: s.Name, Kind: s.Kind, Unit: "pods", Replicas: s.Replicas, Nodes: map[string]int{}, Method: report.MethodCycles}
	probe := s.Pod
	if s.Gang != nil {
		probe = s.Gang.Members[0]
		res.Unit, res.PodsPerGroup, res.Cycle = "groups", len(s.Gang.Members), "coscheduling"
	}
	if s.PodGroupCycle() {
		probe = s.gangs()[0].Members[0]
		res.Unit, res.PodsPerGroup, res.Cycle, res.Groups = "groups", s.Pods(), "pod-group", groupsOf(s, c.r.o.Features.TopologyAwareWorkloadScheduling)
		if s.Workload != nil {
			res.Unit = "workloads"
		}
	}
	res.Profile = probe.Spec.SchedulerName
	fw, err := c.sim.Framework(probe)
	if err != nil {
		return nil, err
	}
	if s.Gang != nil && !s.PodGroupCycle() {
		if _, ok := fw.Plugin(names.Coscheduling); !ok {
			return nil, fmt.Errorf("profile %q: %w (pods of PodGroup %s would be scheduled one by one)", res.Profile, ErrNoCoscheduling, s.Name)
		}
	}
	if s.DaemonSet != nil {
		return res, c.daemonSet(ctx, res)
	}
	limit := s.Replicas
	if limit == 0 {
		limit = c.r.o.Max
	}
	if !s.perCopyObjects() && !c.r.o.Cycles {
		done, err := c.fill(ctx, res, limit)
		if err != nil || done {
			return res, err
		}
	}
	return res, c.cycles(ctx, res, limit)
}

// fill counts a node-local spec node by node (whatif.Sim.Fill) and commits
// the copies, when the limit does not cut the count short (then where the
// first copies land depends on the scores: cycles it is). done is false
// when the shortcut does not apply.
func (c *counter) fill(ctx context.Context, res *report.CapacitySpec, limit int) (done bool, err error) {
	counts, ok, err := c.sim.Fill(ctx, c.spec.Pod, limit)
	if err != nil || !ok {
		return false, err
	}
	total := 0
	for _, nc := range counts {
		total += nc.Count
	}
	if limit > 0 && total > limit {
		if c.r.sparse && c.last && limit > landingBudget {
			// --min-nodes's answer: the count is the limit (at least that
			// many fit), but where the first copies land takes a cycle
			// each, and nothing comes after them.
			res.Method, res.Count, res.LimitedBy = report.MethodNodeLocal, limit, c.limitReason()
			res.NodesNote = fmt.Sprintf("where the first %d of the %d copies that fit would land is not worked out: it takes a scheduling cycle per copy (kubectl sched capacity --replicas %d --add-nodes %d does it)", limit, total, limit, c.added)
			return true, nil
		}
		return false, nil
	}
	res.Method = report.MethodNodeLocal
	copies := c.sim.Copies(c.spec.Pod)
	shared := c.shareCopies()
	for _, nc := range counts {
		if shared {
			// The node's copies are its first one; the others are
			// numbered (the next copy's name is what it was) but not made.
			p := c.newPod()
			for range nc.Count - 1 {
				c.nextName()
			}
			if err := copies.BindShared(p, nc.Node, nc.Count); err != nil {
				return false, err
			}
		} else {
			for range nc.Count {
				if err := copies.Bind(c.newPod(), nc.Node); err != nil {
					return false, err
				}
			}
		}
		res.Nodes[nc.Node] += nc.Count
	}
	res.Count = total
	c.progress(total, limit)
	if limit > 0 && total == limit {
		res.LimitedBy = c.limitReason()
		return true, nil
	}
	// The copy after the last: the real cycle says why it fits nowhere. If
	// it did fit (it cannot, when the plugins' NodeLocal answers are
	// right), the count goes on cycle by cycle.
	return false, nil
}

// cycles places copies one at a time through the scheduling loop until one
// fits nowhere or the limit is reached.
func (c *counter) cycles(ctx context.Context, res *report.CapacitySpec, limit int) error {
	for limit <= 0 || res.Count < limit {
		if err := ctx.Err(); err != nil {
			return err
		}
		pods, err := c.copyPods()
		if err != nil {
			return err
		}
		placed, failed, err := c.sim.Place(ctx, pods)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			// A gang placed in part counts for nothing (its members placed
			// on their own stay where they are, as in kube).
			res.LimitedBy = report.LimitedByFit
			res.StoppedBy = stoppedBy(failed)
			c.next = pods
			if c.spec.PodGroupCycle() {
				res.NextCopy = c.groupOutcomes(pods, placed, failed)
				res.StoppedBy = groupStoppedBy(res.NextCopy, res.StoppedBy)
			}
			return nil
		}
		for _, p := range placed {
			res.Nodes[p.Node]++
			if c.r.o.Placed != nil {
				c.r.o.Placed(c.spec.Name, p.Pod.Namespace+"/"+p.Pod.Name, p.Node)
			}
		}
		res.Count++
		c.progress(res.Count, limit)
	}
	res.LimitedBy = c.limitReason()
	return nil
}

func (c *counter) limitReason() string {
	if c.spec.Replicas > 0 {
		return report.LimitedByReplicas
	}
	return report.LimitedByMax
}

func (c *counter) progress(placed, target int) {
	if c.r.o.Progress != nil {
		nodes := -1
		if c.r.o.MinNodes {
			nodes = c.added
		}
		c.r.o.Progress(Progress{Spec: c.spec.Name, Placed: placed, Target: target, Nodes: nodes})
	}
}

// stoppedBy picks the message of a failed copy: a member's own failure in
// a cycle over the rejections its gang siblings got because of it, and
// over the siblings that were waiting (at Permit, or out of the queue)
// when the group was given up.
func stoppedBy(failed []whatif.Failure) string {
	for _, own := range []func(whatif.Failure) bool{
		func(f whatif.Failure) bool { return !f.ForGroup && len(f.Plugins) > 0 },
		func(f whatif.Failure) bool { return !f.ForGroup && f.Message != "" },
		func(f whatif.Failure) bool { return f.Message != "" },
	} {
		for _, f := range failed {
			if own(f) {
				return f.Message
			}
		}
	}
	return failed[0].Message
}
