package sweep

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/capacity"
	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/internal/whatif"
)

// DryRunRecord is what a dryrun cell records: `dryrun -o json`'s summary
// with the pods evicted and the cluster's use per resource, and, as the
// study's record asks, its placements, unschedulable pods and per-node use.
// Summary.DurationSeconds and PodsPerSecond (wall time) are left out (0) so
// that a study always gives the same bytes.
type DryRunRecord struct {
	Summary       DryRunSummary           `json:"summary"`
	Placements    *[]report.Placement     `json:"placements,omitempty"`
	Unschedulable *[]report.Unschedulable `json:"unschedulable,omitempty"`
	Nodes         *[]report.NodeUsage     `json:"nodes,omitempty"`
}

// DryRunSummary is the dry-run's summary (scheduled, unschedulable,
// nodes, pending, profiles), the evictions preemption made, the nodes
// that got a pod and, per resource (pods among them), the nodes' allocatable and what the pods request of it before
// and after the run.
type DryRunSummary struct {
	report.Summary
	Evictions int `json:"evictions"`
	// NodesUsed counts the nodes that got a pod.
	NodesUsed int           `json:"nodesUsed"`
	Resources []ResourceUse `json:"resources"`
}

// ResourceUse is one resource summed over the nodes (cpu in millicores,
// memory in bytes, other resources in their units).
type ResourceUse struct {
	Name        string `json:"name"`
	Allocatable int64  `json:"allocatable"`
	Before      int64  `json:"before"`
	After       int64  `json:"after"`
}

// CapacityRecord is what a capacity cell records: the count of each spec
// and, with record: [report], the whole `capacity -o json` document.
type CapacityRecord struct {
	Summary CapacitySummary  `json:"summary"`
	Report  *report.Capacity `json:"report,omitempty"`
}

// CapacitySummary is a capacity report's counts: the nodes, the template
// nodes added (addNodes, or the count minNodes found), whether every spec
// with replicas got them, and each spec's count.
type CapacitySummary struct {
	Nodes      int             `json:"nodes"`
	AddedNodes int             `json:"addedNodes"`
	Complete   bool            `json:"complete"`
	Specs      []CapacityCount `json:"specs"`
}

// CapacityCount is one spec's count, as capacity's report gives it.
type CapacityCount struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Unit      string `json:"unit"`
	Replicas  int    `json:"replicas,omitempty"`
	Count     int    `json:"count"`
	LimitedBy string `json:"limitedBy"`
	Method    string `json:"method"`
	StoppedBy string `json:"stoppedBy,omitempty"`
}

// workloadInput is a capacity workload with its paths resolved.
type workloadInput struct {
	files    []string
	template string
}

// loadDump reads a trace's cluster dumps as `dryrun -f` and `capacity
// --snapshot` read them. A cell reads them again: the drivers fill in
// what the dump's pods lack, and cells run side by side.
func loadDump(files []string) (*snapshot.Cluster, error) {
	cl := &snapshot.Cluster{}
	if err := cl.AddPaths(files, nil); err != nil {
		return nil, err
	}
	cl.ResolvePriorities()
	return cl, nil
}

// prepareDumps checks and digests a dryrun or capacity study's traces
// (cluster dumps) and, for capacity, its workloads with each trace.
func (p *Plan) prepareDumps(dir string) (traceHash, workloadHash []string, err error) {
	s := p.Study
	clusters := make([]*snapshot.Cluster, len(s.Axes.Traces))
	for i, t := range s.Axes.Traces {
		field := fmt.Sprintf("axes.traces[%d] (%s)", i, t.Name)
		files := make([]string, len(t.Files))
		for j, f := range t.Files {
			if f == "-" {
				return nil, nil, &FieldError{File: p.Path, Field: field, Err: errors.New("files: '-' (stdin) is not a file a sweep can read again")}
			}
			files[j] = resolve(dir, f)
		}
		cl, err := loadDump(files)
		if err != nil {
			return nil, nil, &FieldError{File: p.Path, Field: field, Err: err}
		}
		if len(cl.Nodes) == 0 && s.Verb == VerbDryRun {
			return nil, nil, &FieldError{File: p.Path, Field: field, Err: dryrun.ErrNoNodes}
		}
		digest, err := digestFiles(t.Files, files...)
		if err != nil {
			return nil, nil, &FieldError{File: p.Path, Field: field, Err: err}
		}
		p.dumps = append(p.dumps, files)
		clusters[i] = cl
		traceHash = append(traceHash, digest)
	}
	for wi, w := range s.Axes.Workloads {
		field := fmt.Sprintf("axes.workloads[%d] (%s)", wi, w.Name)
		in := workloadInput{template: resolve(dir, w.NodeTemplate)}
		for _, f := range w.Files {
			in.files = append(in.files, resolve(dir, f))
		}
		var template *v1.Node
		if in.template != "" {
			if template, err = capacity.LoadNodeTemplate(in.template, nil); err != nil {
				return nil, nil, &FieldError{File: p.Path, Field: field + ".nodeTemplate", Err: err}
			}
		}
		for ti, cl := range clusters {
			specs, err := capacity.LoadSpecs(in.files, nil, "", cl)
			if err != nil {
				return nil, nil, &FieldError{File: p.Path, Field: field, Err: err}
			}
			if n := len(w.Replicas); n > 1 && n != len(specs) {
				return nil, nil, &FieldError{File: p.Path, Field: field + ".replicas", Err: fmt.Errorf("%d values for %d specs (give one for every spec, or one per spec in order)", n, len(specs))}
			}
			if len(cl.Nodes) == 0 && template == nil {
				return nil, nil, &FieldError{File: p.Path, Field: fmt.Sprintf("axes.traces[%d] (%s) with %s", ti, s.Axes.Traces[ti].Name, field), Err: capacity.ErrNoNodes}
			}
		}
		names := append(append([]string{}, w.Files...), w.NodeTemplate)
		digest, err := digestFiles(names, append(append([]string{}, in.files...), in.template)...)
		if err != nil {
			return nil, nil, &FieldError{File: p.Path, Field: field, Err: err}
		}
		p.workloads = append(p.workloads, in)
		workloadHash = append(workloadHash, digest)
	}
	for ti, cl := range clusters {
		for _, w := range cl.Warnings {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: axes.traces[%d] (%s): %s", p.Path, ti, s.Axes.Traces[ti].Name, w))
		}
		if s.Verb == VerbCapacity {
			// As capacity says it: the counts are beside the running
			// pods only.
			n := 0
			for _, pod := range cl.Pods {
				if engine.Pending(pod) {
					n++
				}
			}
			if n > 0 {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: axes.traces[%d] (%s): note: the cluster's %d pending pods are not placed first: the copies are counted beside the running pods (verb dryrun places them)", p.Path, ti, s.Axes.Traces[ti].Name, n))
			}
		}
		for ci, cfg := range p.configs {
			for _, w := range engine.UnservedWarnings(cl, cfg) {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: axes.traces[%d] (%s) with axes.configs[%d] (%s): %s", p.Path, ti, s.Axes.Traces[ti].Name, ci, p.configNames[ci], w))
			}
		}
	}
	return traceHash, workloadHash, nil
}

// runDryRun runs a dryrun cell: `dryrun -f <dumps> --config C
// --feature-gates G [--seed S] [--no-preemption]`.
func (p *Plan) runDryRun(ctx context.Context, c Cell) ([]byte, error) {
	cl, err := loadDump(p.dumps[c.trace])
	if err != nil {
		return nil, err
	}
	o := dryrun.Options{Config: p.config(c), Registry: p.registry, Features: p.features[c.gates], NoPreemption: p.Study.NoPreemption, InPlace: true}
	if c.Axes.Seed != nil {
		o.Seed, o.UseSeed = *c.Axes.Seed, true
	}
	rep, err := dryrun.Run(ctx, cl, o)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, pl := range rep.Placements {
		used[pl.Node] = true
	}
	rec := DryRunRecord{Summary: DryRunSummary{Summary: rep.Summary, Evictions: len(rep.Evictions), NodesUsed: len(used), Resources: resourceUse(rep.Nodes)}}
	rec.Summary.DurationSeconds, rec.Summary.PodsPerSecond = 0, 0
	if p.Study.Records(RecordPlacements) {
		rec.Placements = &rep.Placements
	}
	if p.Study.Records(RecordPending) {
		rec.Unschedulable = &rep.Unschedulable
	}
	if p.Study.Records(RecordNodes) {
		rec.Nodes = &rep.Nodes
	}
	return cellFile(c, rec)
}

// resourceUse sums the nodes' use per resource, by name.
func resourceUse(nodes []report.NodeUsage) []ResourceUse {
	sums := map[string]*ResourceUse{}
	get := func(name string) *ResourceUse {
		if r, ok := sums[name]; ok {
			return r
		}
		r := &ResourceUse{Name: name}
		sums[name] = r
		return r
	}
	for _, n := range nodes {
		for name, v := range n.Allocatable {
			get(name).Allocatable += v
		}
		for name, v := range n.Before {
			get(name).Before += v
		}
		for name, v := range n.After {
			get(name).After += v
		}
		if _, ok := n.Allocatable[string(v1.ResourcePods)]; ok {
			pods := get(string(v1.ResourcePods))
			pods.Before += int64(n.PodsBefore)
			pods.After += int64(n.PodsAfter)
		}
	}
	out := make([]ResourceUse, 0, len(sums))
	for _, r := range sums {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return resourceLess(out[i].Name, out[j].Name) })
	return out
}

// resourceLess orders cpu, memory, then the others by name.
func resourceLess(a, b string) bool {
	rank := func(n string) int {
		switch n {
		case string(v1.ResourceCPU):
			return 0
		case string(v1.ResourceMemory):
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	return a < b
}

// runCapacity runs a capacity cell: `capacity --snapshot <dumps> -f
// <workload> --config C --feature-gates G` with the workload's replicas,
// max and template nodes.
func (p *Plan) runCapacity(ctx context.Context, c Cell) ([]byte, error) {
	cl, err := loadDump(p.dumps[c.trace])
	if err != nil {
		return nil, err
	}
	w, in := p.Study.Axes.Workloads[c.workload], p.workloads[c.workload]
	specs, err := capacity.LoadSpecs(in.files, nil, "", cl)
	if err != nil {
		return nil, err
	}
	if n := len(w.Replicas); n > 0 {
		for i, s := range specs {
			s.Replicas = w.Replicas[min(i, n-1)]
		}
	}
	o := capacity.Options{Config: p.config(c), Registry: p.registry, Features: p.features[c.gates], Max: w.Max, AddNodes: w.AddNodes, MinNodes: w.MinNodes, Source: "snapshot"}
	if in.template != "" {
		if o.Template, err = capacity.LoadNodeTemplate(in.template, nil); err != nil {
			return nil, err
		}
	}
	rep, err := capacity.Run(ctx, cl, specs, o)
	if err != nil {
		if errors.Is(err, capacity.ErrNoCoscheduling) || errors.Is(err, capacity.ErrNeedsReplicas) || errors.Is(err, whatif.ErrUnknownProfile) {
			return nil, inputErrorf("%v", err)
		}
		return nil, err
	}
	rec := CapacityRecord{Summary: CapacitySummary{Nodes: rep.Nodes, AddedNodes: rep.AddedNodes, Complete: rep.Complete, Specs: []CapacityCount{}}}
	for _, s := range rep.Specs {
		rec.Summary.Specs = append(rec.Summary.Specs, CapacityCount{Name: s.Name, Kind: s.Kind, Unit: s.Unit, Replicas: s.Replicas, Count: s.Count, LimitedBy: s.LimitedBy, Method: s.Method, StoppedBy: s.StoppedBy})
	}
	if p.Study.Records(RecordReport) {
		rec.Report = rep
	}
	return cellFile(c, rec)
}
