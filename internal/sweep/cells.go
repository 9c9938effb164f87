package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/featuregates"
	"github.com/kubectl-sched/kubectl-sched/internal/fgd"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// CellAxes are a cell's axes, by name, as the merged result shows them. Seed is absent
// when the study gives no seeds (ties go to the lowest node name).
type CellAxes struct {
	Trace string `json:"trace"`
	// Workload is a capacity cell's workload (absent for other verbs).
	Workload     string `json:"workload,omitempty"`
	Config       string `json:"config"`
	FeatureGates string `json:"featureGates"`
	Seed         *int64 `json:"seed,omitempty"`
}

// Cell is one run of a study.
type Cell struct {
	// Index is the cell's place in the study's order (the index of an
	// Indexed Job's pod).
	Index int
	// ID names the cell's result file: its axes' names.
	ID   string
	Axes CellAxes
	// Hash digests everything the cell's result depends on: the verb, the
	// study's options, the axes' values and the contents of the files they
	// name. A result recorded under another hash is stale.
	Hash string

	trace, workload, config, gates int
}

// Plan is a checked study with its inputs loaded: every cell can run.
type Plan struct {
	Study *Study
	// Path is the study file.
	Path  string
	Cells []Cell
	// Warnings are the inputs' warnings, one line each, for stderr.
	Warnings []string

	traces []*replay.Trace
	// configs are the configurations as loaded with the default gates
	// (nil for an FGD policy); gateConfigs[c][g] configuration c with the
	// default profile of gate set g (GangScheduling with GenericWorkload,
	// as kube's defaulting), which a cell runs.
	configs     []*configv1.KubeSchedulerConfiguration
	gateConfigs [][]*configv1.KubeSchedulerConfiguration
	features    []schedcore.Features
	registry    schedcore.Registry
	until       time.Duration

	// fgd holds, per trace, the FGD artifact's trace when the trace has
	// fgdTune (its traces entry is nil then), and policies, per
	// configuration and trace, what runs the pair there.
	fgd      []*fgd.Trace
	policies [][]fgd.Policy
	extra    schedcore.Registry

	// dumps are, per trace, the cluster dumps a dryrun or capacity cell
	// reads; workloads capacity's specs and template, per workload.
	dumps       [][]string
	workloads   []workloadInput
	configNames []string
}

// defaultConfig and defaultGates stand for an axis the study leaves out.
var (
	defaultConfig = Config{Name: "default"}
	defaultGates  = Gates{Name: "default"}
)

// Prepare loads every input a cell names — traces, configurations, feature
// gates — before any cell runs, so that bad input stops the sweep before
// anything is written. registry holds the plugins (nil: the in-tree ones).
func Prepare(path string, s *Study, registry schedcore.Registry) (*Plan, error) {
	dir := filepath.Dir(path)
	reg, err := engine.Registry(registry)
	if err != nil {
		return nil, err
	}
	p := &Plan{Study: s, Path: path, registry: reg, extra: registry}
	if s.Until != "" {
		p.until, _ = time.ParseDuration(s.Until) // checked by ParseStudy
	}
	configs := s.Axes.Configs
	if len(configs) == 0 {
		configs = []Config{defaultConfig}
	}
	gates := s.Axes.FeatureGates
	if len(gates) == 0 {
		gates = []Gates{defaultGates}
	}
	traceHash := make([]string, len(s.Axes.Traces))
	if s.Verb != VerbReplay {
		// dryrun and capacity read cluster dumps: checked below, once
		// the configurations are loaded.
		p.traces, p.fgd = make([]*replay.Trace, len(s.Axes.Traces)), make([]*fgd.Trace, len(s.Axes.Traces))
	}
	for i, t := range s.Axes.Traces {
		if s.Verb != VerbReplay {
			break
		}
		field := fmt.Sprintf("axes.traces[%d] (%s)", i, t.Name)
		if t.FGDTune != 0 {
			ft, digest, err := loadFGDTrace(dir, t)
			if err != nil {
				return nil, &FieldError{File: path, Field: field, Err: err}
			}
			p.traces, p.fgd = append(p.traces, nil), append(p.fgd, ft)
			traceHash[i] = digest
			continue
		}
		p.fgd = append(p.fgd, nil)
		tr, warnings, digest, err := loadTrace(dir, t)
		if err != nil {
			return nil, &FieldError{File: path, Field: field, Err: err}
		}
		for _, w := range warnings {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %s: %s", path, field, w))
		}
		p.traces = append(p.traces, tr)
		traceHash[i] = digest
	}
	for i, g := range gates {
		// As --feature-gates: kube-scheduler v1.37.2's gates, its
		// validation and words.
		fg := featuregates.New()
		if err := fg.SetFromMap(g.Gates); err != nil {
			return nil, &FieldError{File: path, Field: fmt.Sprintf("axes.featureGates[%d] (%s)", i, g.Name), Err: err}
		}
		p.features = append(p.features, fg.Features())
	}
	configHash := make([]string, len(configs))
	for _, c := range configs {
		p.configNames = append(p.configNames, c.Name)
	}
	for i, c := range configs {
		field := fmt.Sprintf("axes.configs[%d] (%s)", i, c.Name)
		if c.FGDPolicy != "" {
			pols := make([]fgd.Policy, len(p.fgd))
			for ti, ft := range p.fgd {
				pol, err := fgd.PolicyByName(ft, c.FGDPolicy)
				if err == nil {
					_, err = fgd.LoadConfig(pol.Config)
				}
				if err != nil {
					return nil, &FieldError{File: path, Field: field + ".fgdPolicy", Err: err}
				}
				pols[ti] = pol
			}
			p.configs, p.gateConfigs, p.policies = append(p.configs, nil), append(p.gateConfigs, nil), append(p.policies, pols)
			configHash[i] = "fgdPolicy " + c.FGDPolicy
			continue
		}
		file := resolve(dir, c.File)
		if c.File == "default" {
			file = ""
		}
		var cfg *configv1.KubeSchedulerConfiguration
		perGates := make([]*configv1.KubeSchedulerConfiguration, len(p.features))
		for gi, f := range append([]schedcore.Features{schedcore.DefaultFeatures}, p.features...) {
			loaded, err := engine.LoadConfigWithFeatures(file, f)
			if err != nil {
				return nil, &FieldError{File: path, Field: field, Err: fmt.Errorf("loading config %s: %s", c.File, strings.TrimPrefix(unwrapPath(err).Error(), file+": "))}
			}
			if file == "" {
				engine.AddRunProfile(loaded)
			}
			if gi == 0 {
				cfg = loaded
			} else {
				perGates[gi-1] = loaded
			}
		}
		p.configs, p.gateConfigs = append(p.configs, cfg), append(p.gateConfigs, perGates)
		configHash[i], err = digestFiles([]string{c.File}, file)
		if err != nil {
			return nil, &FieldError{File: path, Field: field, Err: err}
		}
		pols := make([]fgd.Policy, len(p.fgd))
		for ti, ft := range p.fgd {
			if ft == nil {
				continue
			}
			text, _ := os.ReadFile(file) // read by LoadConfig above
			pols[ti] = fgd.Policy{Name: c.Name, Config: string(text)}
		}
		p.policies = append(p.policies, pols)
	}
	var workloadHash []string
	if s.Verb != VerbReplay {
		if traceHash, workloadHash, err = p.prepareDumps(dir); err != nil {
			return nil, err
		}
	}
	for ti, tr := range p.traces {
		for ci, cfg := range p.configs {
			if tr == nil || cfg == nil {
				continue
			}
			for _, w := range engine.UnservedWarnings(tr.Objects, cfg) {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: axes.traces[%d] (%s) with axes.configs[%d] (%s): %s", path, ti, s.Axes.Traces[ti].Name, ci, configs[ci].Name, w))
			}
		}
	}
	// A configuration that loads may still name a plugin the registry
	// lacks or give bad args: build its profiles once per set of gates,
	// on a cluster of one node, before any cell runs.
	probe := &snapshot.Cluster{Nodes: []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "sweep-config-check"}}}}
	for ci, cfg := range p.configs {
		if cfg == nil {
			continue // an FGD policy: checked above
		}
		for gi, f := range p.features {
			c, _, err := engine.NewOffline(context.Background(), probe, engine.Options{Config: p.gateConfigs[ci][gi], Registry: reg, Features: f}, engine.Observer{})
			if err != nil {
				field := fmt.Sprintf("axes.configs[%d] (%s)", ci, configs[ci].Name)
				if len(p.features) > 1 {
					field += fmt.Sprintf(" with axes.featureGates[%d] (%s)", gi, gates[gi].Name)
				}
				if configs[ci].File != "" && configs[ci].File != "default" {
					err = fmt.Errorf("%s: %w", configs[ci].File, err)
				}
				return nil, &FieldError{File: path, Field: field, Err: err}
			}
			// An FGD trace's pods go to the default profile, which must
			// run GpuShare: asked of the profile as built (multiPoint,
			// disabled lists and all), not of the file.
			share := false
			if fw := c.Profiles.ByName[v1.DefaultSchedulerName]; fw != nil {
				_, share = fw.Plugin(names.GpuShare)
			}
			c.Close()
			for ti, ft := range p.fgd {
				if ft != nil && !share {
					return nil, &FieldError{File: path, Field: fmt.Sprintf("axes.configs[%d] (%s)", ci, configs[ci].Name), Err: fmt.Errorf("axes.traces[%d] (%s) is the FGD artifact's experiment, which needs the GpuShare plugin in the %s profile, and this configuration does not run it (fgdPolicy: kube-default/GpuShare is kube's default profile with it)", ti, s.Axes.Traces[ti].Name, v1.DefaultSchedulerName)}
				}
			}
		}
	}
	seeds := make([]*int64, 0, len(s.Axes.Seeds))
	for i := range s.Axes.Seeds {
		seeds = append(seeds, &s.Axes.Seeds[i])
	}
	if len(seeds) == 0 {
		seeds = append(seeds, nil)
	}
	common := struct {
		Verb         string   `json:"verb"`
		Until        string   `json:"until"`
		NoPreemption bool     `json:"noPreemption"`
		Record       []string `json:"record"`
	}{s.Verb, p.until.String(), s.NoPreemption, recordKinds(s)}
	// A capacity study's cells go through its workloads; the others
	// have one workload, none.
	workloads := []int{-1}
	if s.Verb == VerbCapacity {
		workloads = workloads[:0]
		for i := range s.Axes.Workloads {
			workloads = append(workloads, i)
		}
	}
	for ti, t := range s.Axes.Traces {
		for _, wi := range workloads {
			for ci, c := range configs {
				for gi, g := range gates {
					for _, seed := range seeds {
						cell := Cell{Index: len(p.Cells), Axes: CellAxes{Trace: t.Name, Config: c.Name, FeatureGates: g.Name, Seed: seed}, trace: ti, workload: wi, config: ci, gates: gi}
						var workload any
						if wi >= 0 {
							cell.Axes.Workload = s.Axes.Workloads[wi].Name
							workload = []any{s.Axes.Workloads[wi], workloadHash[wi]}
						}
						cell.ID = cellID(cell.Axes)
						def := struct {
							Common   any             `json:"common"`
							Trace    any             `json:"trace"`
							Workload any             `json:"workload,omitempty"`
							Config   any             `json:"config"`
							Gates    map[string]bool `json:"gates"`
							Seed     *int64          `json:"seed"`
						}{common, []string{traceHash[ti]}, workload, []string{c.File, configHash[ci]}, g.Gates, seed}
						b, _ := json.Marshal(def) // maps marshal with sorted keys
						sum := sha256.Sum256(b)
						cell.Hash = hex.EncodeToString(sum[:])
						p.Cells = append(p.Cells, cell)
					}
				}
			}
		}
	}
	return p, nil
}

func recordKinds(s *Study) []string {
	var out []string
	for _, k := range recordsOf[s.Verb] {
		if s.Records(k) {
			out = append(out, k)
		}
	}
	return out
}

// cellID is the cell's file name: its axes' names, which the study keeps
// to lower-case letters, digits, '-' and '.'.
func cellID(a CellAxes) string {
	id := a.Trace
	if a.Workload != "" {
		id += "_" + a.Workload
	}
	id += "_" + a.Config + "_" + a.FeatureGates
	if a.Seed != nil {
		id += fmt.Sprintf("_seed%d", *a.Seed)
	}
	return id
}

// loadFGDTrace reads an FGD artifact's trace (fgdTune) and digests its
// files and tune.
func loadFGDTrace(dir string, t Trace) (*fgd.Trace, string, error) {
	nodes, pods := resolve(dir, t.OpenbNodes), resolve(dir, t.OpenbPods)
	ft, err := fgd.LoadTrace(nodes, pods)
	if err != nil {
		return nil, "", err
	}
	if ft.CapacityMilli == 0 {
		return nil, "", fmt.Errorf("%s: no node has a GPU: the FGD experiment measures GPU allocation", t.OpenbNodes)
	}
	digest, err := digestFiles([]string{t.OpenbNodes, t.OpenbPods}, nodes, pods)
	if err != nil {
		return nil, "", err
	}
	return ft, fmt.Sprintf("%s fgdTune %g", digest, t.FGDTune), nil
}

// loadTrace reads a trace axis, as `replay` reads its flags, and digests
// the files it read.
func loadTrace(dir string, t Trace) (*replay.Trace, []string, string, error) {
	cl := &snapshot.Cluster{}
	files := make([]string, len(t.Files))
	names := append([]string{}, t.Files...)
	for i, f := range t.Files {
		if f == "-" {
			return nil, nil, "", errors.New("files: '-' (stdin) is not a file a sweep can read again")
		}
		files[i] = resolve(dir, f)
	}
	if len(files) > 0 {
		if err := cl.AddPaths(files, nil); err != nil {
			return nil, nil, "", err
		}
	}
	nodes, pods := resolve(dir, t.OpenbNodes), resolve(dir, t.OpenbPods)
	if nodes != "" {
		oo := openb.Options{Departures: true}
		ns, ps, err := openb.LoadFiles(nodes, pods, oo)
		if err != nil {
			return nil, nil, "", err
		}
		cl.Nodes = append(cl.Nodes, ns...)
		cl.Pods = append(cl.Pods, ps...)
		cl.Namespaces = append(cl.Namespaces, openb.NamespaceObject(oo))
		files = append(files, nodes, pods)
		names = append(names, t.OpenbNodes, t.OpenbPods)
	}
	tr, err := replay.FromCluster(cl)
	if err != nil {
		return nil, nil, "", err
	}
	if len(tr.Nodes) == 0 {
		return nil, nil, "", replay.ErrNoNodes
	}
	atStart := false
	for _, n := range tr.Nodes {
		if !n.Arrive.After(tr.Start) {
			atStart = true
			break
		}
	}
	if !atStart {
		return nil, nil, "", fmt.Errorf("%w: give the nodes there from the start too, e.g. the cluster dump", replay.ErrNoNodesAtStart)
	}
	digest, err := digestFiles(names, files...)
	if err != nil {
		return nil, nil, "", err
	}
	return tr, cl.Warnings, digest, nil
}

// digestFiles digests the named paths (walking directories in lexical
// order) and their contents; names, when set, replace the paths as the
// study gives them (so that a study moved with its inputs keeps its
// hashes). An empty path digests to "".
func digestFiles(names []string, paths ...string) (string, error) {
	h := sha256.New()
	for i, p := range paths {
		if p == "" {
			continue
		}
		name := p
		if i < len(names) {
			name = names[i]
		}
		fmt.Fprintf(h, "path %q\n", name)
		var files []string
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("%s: %w", p, unwrapPath(err))
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("%s: %w", f, unwrapPath(err))
			}
			rel, _ := filepath.Rel(p, f)
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "file %q %x\n", filepath.ToSlash(rel), sum)
		}
	}
	if len(paths) == 0 || (len(paths) == 1 && paths[0] == "") {
		return "", nil
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// config returns the configuration cell c runs: its configuration with
// the default profile of its gates (nil for an FGD policy).
func (p *Plan) config(c Cell) *configv1.KubeSchedulerConfiguration {
	if p.gateConfigs[c.config] == nil {
		return nil
	}
	return p.gateConfigs[c.config][c.gates]
}
