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
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
// The cluster and the specs are not modified.
func Run(ctx context.Context, cl *snapshot.Cluster, specs []*Spec, o Options) (*report.Capacity, error) {
	if len(cl.Nodes) == 0 && (o.Template == nil || (o.AddNodes == 0 && !o.MinNodes)) {
		return nil, ErrNoNodes
	}
	if o.Nearest == 0 {
		o.Nearest = explain.DefaultNearest
	}
	o.Config = withoutPreemption(o.Config)
	r := &runner{o: o, base: withControllers(cl, specs), specs: specs}
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
	}
	return ev, nil
}

// newSim loads the cluster with added template nodes into a simulation.
func (r *runner) newSim(ctx context.Context, added int) (*whatif.Sim, error) {
	cl := *r.base
	cl.Nodes = append(cl.Nodes[:len(cl.Nodes):len(cl.Nodes)], TemplateNodes(r.o.Template, added, r.base.Nodes)...)
	return whatif.New(ctx, &cl, whatif.Options{Config: r.o.Config, Registry: r.o.Registry, Features: r.o.Features})
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
}

func (c *counter) count(ctx context.Context) (*report.CapacitySpec, error) {
	s := c.spec
	res := &report.CapacitySpec{Name: s.Name, Kind: s.Kind, Unit: "pods", Replicas: s.Replicas, Nodes: map[string]int{}, Method: report.MethodCycles}
	probe := s.Pod
	if s.Gang != nil {
		probe = s.Gang.Members[0]
		res.Unit, res.PodsPerGroup = "groups", len(s.Gang.Members)
	}
	res.Profile = probe.Spec.SchedulerName
	fw, err := c.sim.Framework(probe)
	if err != nil {
		return nil, err
	}
	if s.Gang != nil {
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
	for _, nc := range counts {
		for i := 0; i < nc.Count; i++ {
			if err := copies.Bind(c.newPod(), nc.Node); err != nil {
				return false, err
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
		pods := c.copyPods()
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

// copyPods returns the next copy: one pod, or a gang's members with a
// PodGroup of their own (added to the simulation), or a StatefulSet pod
// with its claims (added too).
func (c *counter) copyPods() []*v1.Pod {
	s := c.spec
	if s.Gang == nil {
		p := c.newPod()
		c.addClaims(p)
		return []*v1.Pod{p}
	}
	g := s.Gang.Group.DeepCopy()
	c.seq++
	name := uniqueName(c.sim, g.GetNamespace(), fmt.Sprintf("%s-%d", g.GetName(), c.seq))
	g.SetName(name)
	g.SetUID(types.UID("capacity-" + g.GetNamespace() + "-" + name))
	g.SetCreationTimestamp(metav1.Time{})
	c.sim.AddObject(g)
	pods := make([]*v1.Pod, len(s.Gang.Members))
	for i, m := range s.Gang.Members {
		p := m.DeepCopy()
		p.Name = uniqueName(c.sim, p.Namespace, fmt.Sprintf("%s-%d", name, i))
		p.UID = types.UID("capacity-" + p.Namespace + "-" + p.Name)
		if s.Gang.Native {
			p.Spec.SchedulingGroup.PodGroupName = &name
		} else {
			setLabel(p, podGroupLabel, name)
		}
		pods[i] = p
	}
	return pods
}

// newPod returns a new copy of the spec's pod with a name of its own.
func (c *counter) newPod() *v1.Pod {
	p := c.spec.Pod.DeepCopy()
	base := c.spec.Pod.Name
	if base == "" {
		base = c.spec.Name[strings.Index(c.spec.Name, "/")+1:]
		if len(p.OwnerReferences) > 0 && c.spec.Kind != KindStatefulSet {
			base = p.OwnerReferences[0].Name
		}
	}
	for {
		c.seq++
		if c.spec.Kind == KindStatefulSet {
			p.Name = fmt.Sprintf("%s-%d", base, c.seq-1)
			setLabel(p, "statefulset.kubernetes.io/pod-name", p.Name)
			setLabel(p, "apps.kubernetes.io/pod-index", fmt.Sprint(c.seq-1))
		} else {
			p.Name = fmt.Sprintf("%s-capacity-%d", base, c.seq)
		}
		if !c.sim.HasPod(p.Namespace, p.Name) {
			break
		}
	}
	p.UID = types.UID("capacity-" + p.Namespace + "-" + p.Name)
	return p
}

func uniqueName(sim *whatif.Sim, ns, name string) string {
	n := name
	for i := 1; sim.HasPod(ns, n); i++ {
		n = fmt.Sprintf("%s-%d", name, i)
	}
	return n
}

// addClaims gives a StatefulSet copy its claims, as the StatefulSet
// controller creates them before the pod: "<template>-<pod>", with the
// default StorageClass when the template names none.
func (c *counter) addClaims(p *v1.Pod) {
	for _, t := range c.spec.ClaimTemplates {
		pvc := &v1.PersistentVolumeClaim{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
		pvc.Name, pvc.Namespace = t.Name+"-"+p.Name, p.Namespace
		pvc.UID = types.UID("capacity-" + pvc.Namespace + "-" + pvc.Name)
		if pvc.Spec.StorageClassName == nil {
			if d := defaultStorageClass(c.r.base); d != "" {
				pvc.Spec.StorageClassName = &d
			}
		}
		c.sim.AddPVC(pvc)
		vol := v1.Volume{Name: t.Name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}}
		replaced := false
		for i := range p.Spec.Volumes {
			if p.Spec.Volumes[i].Name == t.Name {
				p.Spec.Volumes[i] = vol
				replaced = true
			}
		}
		if !replaced {
			p.Spec.Volumes = append(p.Spec.Volumes, vol)
		}
	}
}

// defaultStorageClass is the StorageClass annotated as the default, which
// the DefaultStorageClass admission plugin gives claims without one (the
// newest of several, as kube picks).
func defaultStorageClass(cl *snapshot.Cluster) string {
	return snapshot.DefaultStorageClass(cl.StorageClasses)
}

// describe adds to a spec's result what a person reads beside the count:
// the per-zone and per-label counts and, when a copy stopped the count,
// the nearest nodes' gaps for it.
func (c *counter) describe(ctx context.Context, res *report.CapacitySpec) error {
	labels := map[string]map[string]string{}
	for _, ni := range c.sim.Nodes() {
		labels[ni.Name()] = ni.Node().Labels
	}
	res.Zones = map[string]int{}
	for node, n := range res.Nodes {
		res.Zones[labels[node][ZoneLabel]] += n
	}
	for _, l := range c.r.o.GroupBy {
		if res.Labels == nil {
			res.Labels = map[string]map[string]int{}
		}
		m := map[string]int{}
		for node, n := range res.Nodes {
			m[labels[node][l]] += n
		}
		res.Labels[l] = m
	}
	if res.LimitedBy != report.LimitedByFit || c.r.o.Nearest < 0 || len(c.next) == 0 {
		return nil
	}
	// A gang's members are alike: the first speaks for the copy.
	pod := c.next[0]
	explainer := c.sim.Explainer(c.r.base, explain.Options{Config: c.r.o.Config, Registry: c.r.o.Registry, Features: c.r.o.Features, Nearest: c.r.o.Nearest})
	var ex *report.Explanation
	explainIt := func(p *v1.Pod) (err error) {
		ex, err = explainer.Explain(ctx, p)
		return err
	}
	var err error
	if hasTemplateClaims(pod) {
		// The copy's claims went with it when it fit nowhere: explained
		// without them, DynamicResources would stop at PreFilter (no
		// claim) and name no node. Back in the cluster with claims of its
		// own, it is explained as its cycle saw it.
		err = c.sim.WithPending(pod, explainIt)
	} else {
		err = explainIt(pod)
	}
	if err != nil {
		return err
	}
	for _, name := range ex.Nearest {
		for _, n := range ex.Nodes {
			if n.Node != name {
				continue
			}
			nn := report.NearNode{Node: name, Reasons: []string{}, Gaps: []string{}}
			for _, f := range n.Failures {
				nn.Reasons = append(nn.Reasons, f.Plugin+": "+f.Reason)
			}
			details := false
			for _, g := range n.Gaps {
				nn.Gaps = append(nn.Gaps, g.Gap)
				nn.Details = append(nn.Details, g.Details)
				details = details || len(g.Details) > 0
			}
			if !details {
				nn.Details = nil
			}
			res.Nearest = append(res.Nearest, nn)
		}
	}
	return nil
}

// leftover sums the nodes' allocatable and free resources, and their DRA
// devices (leftoverDevices).
func leftover(nodes []*schedcore.NodeInfo, dra *schedcore.DRAManager) report.Leftover {
	l := report.Leftover{Allocatable: map[string]int64{}, Free: map[string]int64{}, Nodes: map[string]map[string]int64{}}
	devices, free := leftoverDevices(dra)
	for _, ni := range nodes {
		a, r := &ni.Allocatable, &ni.Requested
		left := map[string]int64{
			"cpu":    a.MilliCPU - r.MilliCPU,
			"memory": a.Memory - r.Memory,
			"pods":   int64(a.AllowedPodNumber - len(ni.Pods)),
		}
		alloc := map[string]int64{"cpu": a.MilliCPU, "memory": a.Memory, "pods": int64(a.AllowedPodNumber)}
		if a.EphemeralStorage > 0 {
			left["ephemeral-storage"] = a.EphemeralStorage - r.EphemeralStorage
			alloc["ephemeral-storage"] = a.EphemeralStorage
		}
		for k, v := range a.ScalarResources {
			left[string(k)] = v - r.ScalarResources[k]
			alloc[string(k)] = v
		}
		for k, v := range devices[ni.Name()] {
			left[k] = free[ni.Name()][k]
			alloc[k] = v
		}
		for k, v := range left {
			l.Free[k] += v
		}
		for k, v := range alloc {
			l.Allocatable[k] += v
		}
		l.Nodes[ni.Name()] = left
	}
	return l
}

// DeviceResource is the name leftover gives a DRA driver's devices,
// "<driver>/devices", as replay's series columns do.
func DeviceResource(driver string) string { return driver + "/devices" }

// leftoverDevices counts, per node and DeviceResource, the devices the
// node's own ResourceSlices publish (the newest generation of each pool)
// and those of them no allocation holds (an allocation with admin access
// holds none; a device shared through consumable capacity is held once
// any claim has a share of it). Slices shared by several nodes are left
// out: their devices are no node's.
func leftoverDevices(dra *schedcore.DRAManager) (devices, free map[string]map[string]int64) {
	if dra == nil || dra.Empty() {
		return nil, nil
	}
	type poolKey struct{ driver, pool string }
	type deviceKey struct{ driver, pool, device string }
	slices := dra.Slices()
	gen := map[poolKey]int64{}
	for _, s := range slices {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		gen[k] = max(gen[k], s.Spec.Pool.Generation)
	}
	held := map[deviceKey]bool{}
	allocs, _ := dra.Allocations()
	for _, a := range allocs {
		for _, r := range a.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			held[deviceKey{r.Driver, r.Pool, r.Device}] = true
		}
	}
	devices, free = map[string]map[string]int64{}, map[string]map[string]int64{}
	for _, s := range slices {
		if s.Spec.NodeName == nil || *s.Spec.NodeName == "" || s.Spec.Pool.Generation != gen[poolKey{s.Spec.Driver, s.Spec.Pool.Name}] {
			continue
		}
		node, res := *s.Spec.NodeName, DeviceResource(s.Spec.Driver)
		if devices[node] == nil {
			devices[node], free[node] = map[string]int64{}, map[string]int64{}
		}
		for _, d := range s.Spec.Devices {
			devices[node][res]++
			if !held[deviceKey{s.Spec.Driver, s.Spec.Pool.Name, d.Name}] {
				free[node][res]++
			}
		}
	}
	return devices, free
}
