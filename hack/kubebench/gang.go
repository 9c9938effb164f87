package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// The -gang mode runs kube-scheduler's own loop as -preemption does
// (scheduler.New, the queue with PodGroup queueing, the pod-group cycle
// scheduleOnePodGroup, PodGroupPostFilter and workload-aware preemption,
// binding through the fake clientset) with the feature gates of
// -feature-gates (GenericWorkload=true at least, set before the
// configuration is defaulted, so the default profile gains GangScheduling
// and, with TopologyAwareWorkloadScheduling, TopologyPlacementGenerator
// and PodGroupPodsCount), and records per PodGroup which pods bound
// where, the topology domain, and the status conditions kube wrote, and
// per pending pod its PodScheduled=False message and last
// FailedScheduling event.

// gangResult is a reference: what kube did with a snapshot's groups.
type gangResult struct {
	Snapshot     string          `json:"snapshot"`
	FeatureGates map[string]bool `json:"featureGates"`
	Groups       []groupResult   `json:"groups"`
	// Placements are every binding (group members and others), by pod.
	Placements    []placement  `json:"placements"`
	Evictions     []eviction   `json:"evictions"`
	Unschedulable []podFailure `json:"unschedulable"`
	// The first run's loop figures (printed, not written): pending pods,
	// bindings, the loop's wall and CPU time to its last new decision,
	// and its scheduling attempts.
	pods, scheduled, attempts int
	loopWall, loopCPU         time.Duration
}

type groupResult struct {
	PodGroup       string `json:"podGroup"`
	Policy         string `json:"policy"` // gang or basic
	MinCount       int32  `json:"minCount,omitempty"`
	Priority       int32  `json:"priority"`
	DisruptionMode string `json:"disruptionMode"` // Single or All
	TopologyKey    string `json:"topologyKey,omitempty"`
	// Members are the group's pods in the snapshot (bound or pending).
	Members []string `json:"members"`
	// Bound are the members bound at the end, with their node; Evicted
	// the members preemption deleted.
	Bound   []placement `json:"bound"`
	Evicted []string    `json:"evicted"`
	// Domains are the values of TopologyKey (or, without one, of the
	// rack label example.com/rack when the nodes have it) over the bound
	// members' nodes, sorted.
	Domains []string `json:"domains"`
	// Conditions are the PodGroup's status conditions kube wrote.
	Conditions []groupCondition `json:"conditions"`
	// Event is the last FailedScheduling event on the PodGroup, if any.
	Event string `json:"event,omitempty"`
}

// Messages kube words from a random order (the "first placement" of a
// topology gang is the first of a map's keys; which member fails first):
// -gang-runs repeats the run, wants the same decisions, and lists the
// other wordings a message had in AlsoSeen.

type groupCondition struct {
	Type     string   `json:"type"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
	Message  string   `json:"message"`
	AlsoSeen []string `json:"alsoSeen,omitempty"`
}

type podFailure struct {
	Pod string `json:"pod"`
	// Message is the pod's PodScheduled=False condition message; Event
	// the last FailedScheduling event's.
	Message  string   `json:"message"`
	Event    string   `json:"event"`
	AlsoSeen []string `json:"alsoSeen,omitempty"`
}

// runGangN runs the -gang mode runs times; the decisions (bindings,
// domains, evictions, condition types, statuses and reasons, which pods
// stay pending) must be the same every time; the messages that differ
// are kept from the first run, with the others in AlsoSeen.
func runGangN(ctx context.Context, snapshotName string, cl *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32, gates map[string]bool, runs int) (*gangResult, error) {
	first, err := runGang(ctx, snapshotName, cl, cfg, percentage, gates)
	if err != nil {
		return nil, err
	}
	for r := 1; r < runs; r++ {
		next, err := runGang(ctx, snapshotName, cl, cfg, percentage, gates)
		if err != nil {
			return nil, err
		}
		if a, b := decisions(first), decisions(next); a != b {
			return nil, fmt.Errorf("run %d decided otherwise than run 1:\n%s\n%s", r+1, a, b)
		}
		seen := func(have string, also *[]string, msg string) {
			if msg != have && !slices.Contains(*also, msg) {
				*also = append(*also, msg)
				sort.Strings(*also)
			}
		}
		for i := range first.Groups {
			for j := range first.Groups[i].Conditions {
				c := &first.Groups[i].Conditions[j]
				seen(c.Message, &c.AlsoSeen, next.Groups[i].Conditions[j].Message)
			}
		}
		for i := range first.Unschedulable {
			u := &first.Unschedulable[i]
			seen(u.Message, &u.AlsoSeen, next.Unschedulable[i].Message)
			seen(u.Message, &u.AlsoSeen, next.Unschedulable[i].Event)
		}
	}
	return first, nil
}

// decisions renders what must not change between runs.
func decisions(r *gangResult) string {
	var b strings.Builder
	for _, g := range r.Groups {
		fmt.Fprintf(&b, "%s bound=%v evicted=%v domains=%v", g.PodGroup, g.Bound, g.Evicted, g.Domains)
		for _, c := range g.Conditions {
			fmt.Fprintf(&b, " %s=%s/%s", c.Type, c.Status, c.Reason)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "placements=%v evictions=%v pending=", r.Placements, r.Evictions)
	for _, u := range r.Unschedulable {
		b.WriteString(u.Pod + " ")
	}
	return b.String()
}

// genericWorkload reports whether kube's GenericWorkload gate is on.
func genericWorkload() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload)
}

// rackLabel is the generated clusters' rack label (internal/gen/gang).
const rackLabel = "example.com/rack"

// setGates parses "A=true,B=false" into kube's mutable feature gate.
func setGates(spec string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, kv := range strings.Split(spec, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || (v != "true" && v != "false") {
			return nil, fmt.Errorf("-feature-gates: %q: want NAME=true|false", kv)
		}
		gates[k] = v == "true"
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, fmt.Errorf("-feature-gates: %w", err)
	}
	return gates, nil
}

func runGang(ctx context.Context, snapshotName string, cl *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32, gates map[string]bool) (*gangResult, error) {
	// kube's longest pod backoff (podMaxBackoffDuration, 10 s) and a margin.
	quietWithBackoff = 12 * time.Second
	res, err := runPreemption(ctx, cl, cfg, percentage)
	if err != nil {
		return nil, err
	}
	out := &gangResult{Snapshot: snapshotName, FeatureGates: gates, Groups: []groupResult{}, Evictions: res.Evictions, Unschedulable: []podFailure{},
		pods: len(cl.pending), scheduled: len(res.Placements), attempts: res.attempts, loopWall: res.loopWall, loopCPU: res.loopCPU}
	// kube's Preempted event names the candidate, which for a pod group's
	// preemption is the whole cluster ("on node cluster"): the victim's
	// node is taken from the snapshot.
	runningOn := map[string]string{}
	for _, o := range cl.objects {
		if p, ok := o.(*v1.Pod); ok && p.Spec.NodeName != "" {
			runningOn[key(p)] = p.Spec.NodeName
		}
	}
	for i := range out.Evictions {
		if n := runningOn[out.Evictions[i].Pod]; n != "" {
			out.Evictions[i].Node = n
		}
	}
	nodeLabels := map[string]map[string]string{}
	members := map[string][]*v1.Pod{}
	var groups []*schedulingv1beta1.PodGroup
	for _, o := range cl.objects {
		switch x := o.(type) {
		case *v1.Node:
			nodeLabels[x.Name] = x.Labels
		case *v1.Pod:
			if g := x.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
				k := x.Namespace + "/" + *g.PodGroupName
				members[k] = append(members[k], x)
			}
		case *schedulingv1beta1.PodGroup:
			groups = append(groups, x)
		}
	}
	// Final state of the pods, from the API.
	pods, err := res.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	nodeOf := map[string]string{}
	for i := range pods.Items {
		p := &pods.Items[i]
		nodeOf[key(p)] = p.Spec.NodeName
	}
	evicted := map[string]bool{}
	for _, e := range res.Evictions {
		evicted[e.Pod] = true
	}
	for _, p := range res.Placements {
		if _, alive := nodeOf[p.Pod]; alive {
			out.Placements = append(out.Placements, p)
		}
	}
	sort.Slice(out.Placements, func(i, j int) bool { return out.Placements[i].Pod < out.Placements[j].Pod })
	if out.Placements == nil {
		out.Placements = []placement{}
	}
	sort.Slice(groups, func(i, j int) bool { return key(groups[i]) < key(groups[j]) })
	for _, pg := range groups {
		live, err := res.client.SchedulingV1beta1().PodGroups(pg.Namespace).Get(ctx, pg.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		g := groupResult{PodGroup: key(pg), Policy: "basic", Members: []string{}, Bound: []placement{}, Evicted: []string{}, Domains: []string{}, Conditions: []groupCondition{}}
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			g.Policy, g.MinCount = "gang", gang.MinCount
		}
		if pg.Spec.Priority != nil {
			g.Priority = *pg.Spec.Priority
		}
		g.DisruptionMode = "Single"
		if m := pg.Spec.DisruptionMode; m != nil && m.All != nil {
			g.DisruptionMode = "All"
		}
		domainKey := rackLabel
		if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			g.TopologyKey = c.Topology[0].Key
			domainKey = g.TopologyKey
		}
		ms := members[key(pg)]
		sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
		domains := map[string]bool{}
		for _, p := range ms {
			k := key(p)
			g.Members = append(g.Members, k)
			if evicted[k] {
				g.Evicted = append(g.Evicted, k)
			}
			if n := nodeOf[k]; n != "" {
				g.Bound = append(g.Bound, placement{Pod: k, Node: n})
				if v, ok := nodeLabels[n][domainKey]; ok {
					domains[v] = true
				}
			}
		}
		for d := range domains {
			g.Domains = append(g.Domains, d)
		}
		sort.Strings(g.Domains)
		for _, c := range live.Status.Conditions {
			g.Conditions = append(g.Conditions, groupCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
		}
		g.Event = res.failedScheduling["PodGroup "+key(pg)]
		out.Groups = append(out.Groups, g)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" {
			continue
		}
		f := podFailure{Pod: key(p), Event: res.failedScheduling["Pod "+key(p)]}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				f.Message = c.Message
			}
		}
		out.Unschedulable = append(out.Unschedulable, f)
	}
	sort.Slice(out.Unschedulable, func(i, j int) bool { return out.Unschedulable[i].Pod < out.Unschedulable[j].Pod })
	return out, nil
}
