package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/capacity"
	"github.com/kubectl-sched/kubectl-sched/internal/drain"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	workload_ "github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// whatif measures `capacity` and `drain` (-whatif): on a generated
// cluster of 5000 nodes and about 15000 running pods (the size),
// "how many more" of a node-local pod and of pods placed cycle by cycle, a
// --min-nodes search, and a drain of 10 nodes; and --min-nodes by search
// on 500 nodes. Default configuration (kube's adaptive
// percentageOfNodesToScore). Wall and CPU time per run.
func whatif(only string) {
	big, err := mixed(5000, 15000)
	if err != nil {
		fatal("whatif", err)
	}
	small, err := mixed(500, 1500)
	if err != nil {
		fatal("whatif", err)
	}
	cfg, err := engine.LoadConfig("")
	if err != nil {
		fatal("whatif", err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		fatal("whatif", err)
	}
	spec := func(name string, replicas int, mutate func(*v1.Pod)) *capacity.Spec {
		p := &v1.Pod{}
		p.Name, p.Namespace, p.Labels = name, "default", map[string]string{"app": name}
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		p.Spec.Containers = []v1.Container{{Name: "c", Image: "x", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: mustQ("1"), v1.ResourceMemory: mustQ("2Gi")}}}}
		if mutate != nil {
			mutate(p)
		}
		return &capacity.Spec{Name: "default/" + name, Kind: capacity.KindPod, Pod: p, Replicas: replicas}
	}
	zoneSpread := func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: metaSelector(p.Labels)}}
	}
	hostSpread := func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 3, TopologyKey: v1.LabelHostname,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: metaSelector(p.Labels)}}
	}
	tmpl := &v1.Node{}
	tmpl.Name = "m6i"
	tmpl.Labels = map[string]string{v1.LabelTopologyZone: "zone-a", workload_.LabelPool: "general"}
	tmpl.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: mustQ("7860m"), v1.ResourceMemory: mustQ("31030Mi"), v1.ResourcePods: mustQ("110")}

	type bench struct {
		name string
		run  func() (string, error)
	}
	count := func(cl *snapshot.Cluster, o capacity.Options, specs ...*capacity.Spec) func() (string, error) {
		return func() (string, error) {
			o.Config, o.Registry = cfg, reg
			rep, err := capacity.Run(context.Background(), cl, specs, o)
			if err != nil {
				return "", err
			}
			s := rep.Specs[0]
			out := fmt.Sprintf("%d copies, %s", s.Count, s.Method)
			if rep.MinNodes != nil {
				out += fmt.Sprintf(", %d nodes needed (%s, %d evaluations)", rep.MinNodes.NodesNeeded, rep.MinNodes.Method, len(rep.MinNodes.Evaluations))
			}
			return out, nil
		}
	}
	benches := []bench{
		{"capacity/5000 nodes: how many more (node-local)", count(big, capacity.Options{}, spec("web", 0, nil))},
		{"capacity/5000 nodes: 1000 under a hard zone spread (cycles)", count(big, capacity.Options{}, spec("zone", 1000, zoneSpread))},
		{"capacity/5000 nodes: --min-nodes for 60000 (node-local)", count(big, capacity.Options{MinNodes: true, Template: tmpl}, spec("web", 60000, nil))},
		{"capacity/500 nodes: --min-nodes for 3000 under a hard hostname spread (search)", count(small, capacity.Options{MinNodes: true, Template: tmpl}, spec("host", 3000, hostSpread))},
		{"drain/5000 nodes: 10 nodes", func() (string, error) {
			var names []string
			for _, n := range big.Nodes {
				names = append(names, n.Name)
			}
			sort.Strings(names)
			var nodes []string
			for i := 0; i < len(names) && len(nodes) < 10; i += 499 {
				nodes = append(nodes, names[i])
			}
			rep, err := drain.Run(context.Background(), big, nodes, drain.Options{Config: cfg, Registry: reg})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d evicted, %d placed, %d pending", rep.Summary.Evicted, rep.Summary.Placed, rep.Summary.Pending), nil
		}},
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "what-if\tseconds\tcpu-s\tresult")
	for _, b := range benches {
		if only != "" && !contains(b.name, only) {
			continue
		}
		c0, t0 := cpuTime(), time.Now()
		res, err := b.run()
		if err != nil {
			fatal(b.name, err)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\n", b.name, time.Since(t0).Seconds(), (cpuTime() - c0).Seconds(), res)
	}
	_ = tw.Flush()
}

// mixed generates the mixed cluster with explicit sizes and no pending
// pods, seed 1.
func mixed(nodes, running int) (*snapshot.Cluster, error) {
	w, err := workload_.Generate("Mixed", workload_.Params{Nodes: nodes, InitPods: running, Seed: 1})
	if err != nil {
		return nil, err
	}
	cl := &snapshot.Cluster{Namespaces: w.Namespaces, Nodes: w.Nodes, Services: w.Services}
	cl.Pods = append(cl.Pods, w.Existing...)
	return cl, nil
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

func metaSelector(m map[string]string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: m}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
