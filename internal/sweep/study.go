// Package sweep runs a study: every combination (cell) of its axes — traces,
// scheduler configurations, feature gates, seeds — through one of the
// engine's drivers, several at a time, each cell's result written to its own
// file as it ends, so that an interrupted sweep resumes where it stopped;
// then merges the cells' results into one document.
package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Study is what a study file says. Paths in it are relative to the file's
// directory.
type Study struct {
	// Verb is the driver every cell runs: "replay", "dryrun" or
	// "capacity".
	Verb string `json:"verb"`
	// Axes are the values the cells combine.
	Axes Axes `json:"axes"`
	// Until (replay) stops each replay this long after its start ("24h"); empty
	// runs until nothing is left to happen.
	Until string `json:"until,omitempty"`
	// NoPreemption turns PostFilter (preemption) off in every cell
	// (replay, dryrun; capacity always counts without it).
	NoPreemption bool `json:"noPreemption,omitempty"`
	// Record lists what each cell's result keeps: "summary" (always);
	// for replay "series" (the time series: allocation, arrived demand
	// and fragmentation per resource, pending pods...), "pending" (the
	// pods pending at the end), "busiest" (the busiest nodes); for dryrun
	// "placements", "pending" (the unschedulable pods with kube's
	// message), "nodes" (each node's use before and after); for capacity
	// "report" (the whole `capacity -o json` document).
	Record []string `json:"record,omitempty"`
}

// Axes are a study's dimensions. The cells are their product, in this
// order: traces, then workloads (capacity), then configurations, then
// feature gates, then seeds (the last varies fastest).
type Axes struct {
	Traces []Trace `json:"traces"`
	// Workloads (capacity, required) are what each cell counts.
	Workloads    []Workload `json:"workloads,omitempty"`
	Configs      []Config   `json:"configs,omitempty"`
	FeatureGates []Gates    `json:"featureGates,omitempty"`
	Seeds        []int64    `json:"seeds,omitempty"`
}

// Trace is one workload: cluster dumps and trace files read together, as
// `replay -f` reads them, or the Alibaba openb CSVs. For dryrun, Files are
// the dumps of `dryrun -f`; for capacity, those of `capacity --snapshot`.
type Trace struct {
	Name       string   `json:"name"`
	Files      []string `json:"files,omitempty"`
	OpenbNodes string   `json:"openbNodes,omitempty"`
	OpenbPods  string   `json:"openbPods,omitempty"`
	// FGDTune, with the openb CSVs, makes the trace the FGD artifact's
	// experiment (internal/fgd): each seed draws its workload from the
	// pod list until the GPU demand is FGDTune times the GPU nodes'
	// capacity, the pods arrive one at a time and each is tried once, no
	// departures, no preemption; the cell records the artifact's curves
	// (ReplayRecord.FGD).
	FGDTune float64 `json:"fgdTune,omitempty"`
}

// Config is one scheduler configuration: a KubeSchedulerConfiguration file,
// or kube-scheduler's defaults when File is empty.
type Config struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	// FGDPolicy names one of the FGD table's rows (Random, DotProd,
	// GpuClustering, GpuPacking, BestFit, FGD, kube-default/GpuShare)
	// instead of a file: its configuration is built for each trace's pods
	// (FGD's typical pods), so every trace must have fgdTune.
	FGDPolicy string `json:"fgdPolicy,omitempty"`
}

// Workload is one `capacity` run's specs and what-if: the flags of
// `capacity -f FILES --replicas ... --max N --add-nodes N --node-template
// F --min-nodes`. Paths are relative to the study file.
type Workload struct {
	Name string `json:"name"`
	// Files are the specs (-f): Pods, Deployments, ReplicaSets,
	// StatefulSets, Jobs, DaemonSets, PodGroups with their pods.
	Files []string `json:"files"`
	// Replicas are the copies wanted: one value for every spec, or one
	// per spec in order (0: as many as fit).
	Replicas []int `json:"replicas,omitempty"`
	// Max stops a spec without Replicas at this many copies (0: no
	// limit).
	Max int `json:"max,omitempty"`
	// AddNodes adds this many NodeTemplate nodes; MinNodes finds the
	// fewest with which every spec gets its Replicas.
	AddNodes     int    `json:"addNodes,omitempty"`
	NodeTemplate string `json:"nodeTemplate,omitempty"`
	MinNodes     bool   `json:"minNodes,omitempty"`
}

// Gates is one set of feature gates changed from kube-scheduler v1.37.2's
// defaults, by name.
type Gates struct {
	Name  string          `json:"name"`
	Gates map[string]bool `json:"gates,omitempty"`
}

// Record kinds.
const (
	RecordSummary = "summary"
	RecordSeries  = "series"
	RecordPending = "pending"
	RecordBusiest = "busiest"
	// RecordPlacements and RecordNodes are dryrun's placements and
	// per-node use.
	RecordPlacements = "placements"
	RecordNodes      = "nodes"
	// RecordReport is capacity's whole report.
	RecordReport = "report"
)

// The verbs a study runs.
const (
	VerbReplay   = "replay"
	VerbDryRun   = "dryrun"
	VerbCapacity = "capacity"
)

// recordsOf are the record kinds of each verb, summary first.
var recordsOf = map[string][]string{
	VerbReplay:   {RecordSummary, RecordSeries, RecordPending, RecordBusiest},
	VerbDryRun:   {RecordSummary, RecordPlacements, RecordPending, RecordNodes},
	VerbCapacity: {RecordSummary, RecordReport},
}

// FieldError is bad input in a study: the file, the field and what is
// wrong. The CLI exits 2 on it.
type FieldError struct {
	File  string
	Field string
	Err   error
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Err.Error()
	}
	return e.File + ": " + e.Field + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

// ErrInput marks every error caused by the study or its inputs (and by
// results on disk that a sweep must not overwrite or reuse).
var ErrInput = errors.New("bad study input")

type inputError struct{ msg string }

func (e inputError) Error() string        { return e.msg }
func (e inputError) Is(target error) bool { return target == ErrInput }

// inputErrorf is bad input, said as the message alone.
func inputErrorf(format string, args ...any) error {
	return inputError{fmt.Sprintf(format, args...)}
}

// IsInput says whether err is bad input.
func IsInput(err error) bool {
	var fe *FieldError
	return errors.As(err, &fe) || errors.Is(err, ErrInput)
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)

// ReadStudy reads and checks a study file: unknown fields, names,
// duplicates, the verb and what to record. Inputs are checked by Prepare.
func ReadStudy(path string) (*Study, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FieldError{File: path, Err: fmt.Errorf("reading study: %w", unwrapPath(err))}
	}
	s, err := ParseStudy(data)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.File = path
			return nil, fe
		}
		return nil, &FieldError{File: path, Err: err}
	}
	return s, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ParseStudy parses a study strictly (an unknown field is an error) and
// checks it.
func ParseStudy(data []byte) (*Study, error) {
	var s Study
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty study")
	}
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		msg := err.Error()
		for _, prefix := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
			msg = strings.TrimPrefix(msg, prefix)
		}
		return nil, fmt.Errorf("parsing study: %s", msg)
	}
	return &s, s.check()
}

func (s *Study) check() error {
	if s.Verb == "" {
		return &FieldError{Field: "verb", Err: errors.New("required (replay, dryrun or capacity)")}
	}
	kinds, ok := recordsOf[s.Verb]
	if !ok {
		return &FieldError{Field: "verb", Err: fmt.Errorf("%q is not supported (replay, dryrun or capacity)", s.Verb)}
	}
	if s.Until != "" && s.Verb != VerbReplay {
		return &FieldError{Field: "until", Err: fmt.Errorf("goes with verb replay, not %s", s.Verb)}
	}
	if s.NoPreemption && s.Verb == VerbCapacity {
		return &FieldError{Field: "noPreemption", Err: errors.New("capacity always counts without preemption")}
	}
	if len(s.Axes.Seeds) > 0 && s.Verb == VerbCapacity {
		return &FieldError{Field: "axes.seeds", Err: errors.New("capacity breaks ties by the lowest node name: seeds do not apply")}
	}
	if len(s.Axes.Workloads) > 0 && s.Verb != VerbCapacity {
		return &FieldError{Field: "axes.workloads", Err: fmt.Errorf("goes with verb capacity, not %s", s.Verb)}
	}
	if len(s.Axes.Workloads) == 0 && s.Verb == VerbCapacity {
		return &FieldError{Field: "axes.workloads", Err: errors.New("at least one workload is required: what each capacity cell counts")}
	}
	if s.Until != "" {
		d, err := time.ParseDuration(s.Until)
		if err != nil || d < 0 {
			return &FieldError{Field: "until", Err: fmt.Errorf("%q is not a duration such as 24h", s.Until)}
		}
	}
	for i, r := range s.Record {
		if !slices.Contains(kinds, r) {
			return &FieldError{Field: fmt.Sprintf("record[%d]", i), Err: fmt.Errorf("unknown %q for verb %s (%s)", r, s.Verb, strings.Join(kinds, ", "))}
		}
	}
	if len(s.Axes.Traces) == 0 {
		return &FieldError{Field: "axes.traces", Err: errors.New("at least one trace is required")}
	}
	names := map[string]bool{}
	checkName := func(field, name string) error {
		if !nameRE.MatchString(name) || len(name) > 63 {
			return &FieldError{Field: field + ".name", Err: fmt.Errorf("%q must be lower-case letters, digits, '-' and '.' (at most 63)", name)}
		}
		if names[field[:indexBracket(field)]+"/"+name] {
			return &FieldError{Field: field + ".name", Err: fmt.Errorf("%q is named twice", name)}
		}
		names[field[:indexBracket(field)]+"/"+name] = true
		return nil
	}
	for i, t := range s.Axes.Traces {
		f := fmt.Sprintf("axes.traces[%d]", i)
		if err := checkName(f, t.Name); err != nil {
			return err
		}
		if s.Verb != VerbReplay {
			switch {
			case t.OpenbNodes != "" || t.OpenbPods != "":
				return &FieldError{Field: f, Err: fmt.Errorf("openbNodes and openbPods go with verb replay: %s reads cluster dumps (files)", s.Verb)}
			case t.FGDTune != 0:
				return &FieldError{Field: f + ".fgdTune", Err: fmt.Errorf("goes with verb replay, not %s", s.Verb)}
			case len(t.Files) == 0:
				return &FieldError{Field: f, Err: fmt.Errorf("files are required: the cluster dumps %s reads", s.Verb)}
			}
		}
		if (t.OpenbNodes == "") != (t.OpenbPods == "") {
			return &FieldError{Field: f, Err: errors.New("openbNodes and openbPods go together")}
		}
		if len(t.Files) == 0 && t.OpenbNodes == "" {
			return &FieldError{Field: f, Err: errors.New("files or openbNodes and openbPods are required")}
		}
		if t.FGDTune != 0 {
			switch {
			case t.FGDTune < 0 || t.FGDTune > 10:
				return &FieldError{Field: f + ".fgdTune", Err: fmt.Errorf("%g is not a ratio of the GPU capacity between 0 and 10 (the artifact's is 1.3)", t.FGDTune)}
			case t.OpenbNodes == "" || len(t.Files) > 0:
				return &FieldError{Field: f + ".fgdTune", Err: errors.New("goes with openbNodes and openbPods alone (the artifact's CSVs), not files")}
			case len(s.Axes.Seeds) == 0:
				return &FieldError{Field: f + ".fgdTune", Err: errors.New("needs seeds: each seed draws the artifact's workload (its seeds are 42 to 51)")}
			case s.Records(RecordSeries) || s.Records(RecordPending) || s.Records(RecordBusiest):
				return &FieldError{Field: f + ".fgdTune", Err: errors.New("records the artifact's curves: record nothing but summary")}
			}
		}
	}
	for i, w := range s.Axes.Workloads {
		f := fmt.Sprintf("axes.workloads[%d]", i)
		if err := checkName(f, w.Name); err != nil {
			return err
		}
		if err := w.check(); err != nil {
			return &FieldError{Field: f, Err: err}
		}
	}
	for i, c := range s.Axes.Configs {
		f := fmt.Sprintf("axes.configs[%d]", i)
		if err := checkName(f, c.Name); err != nil {
			return err
		}
		if c.FGDPolicy == "" {
			continue
		}
		if c.File != "" {
			return &FieldError{Field: f, Err: errors.New("file and fgdPolicy are exclusive")}
		}
		for j, t := range s.Axes.Traces {
			if t.FGDTune == 0 {
				return &FieldError{Field: f + ".fgdPolicy", Err: fmt.Errorf("is built for the FGD artifact's traces, and axes.traces[%d] (%s) has no fgdTune", j, t.Name)}
			}
		}
	}
	for i, g := range s.Axes.FeatureGates {
		if err := checkName(fmt.Sprintf("axes.featureGates[%d]", i), g.Name); err != nil {
			return err
		}
	}
	seeds := map[int64]bool{}
	for i, seed := range s.Axes.Seeds {
		if seeds[seed] {
			return &FieldError{Field: fmt.Sprintf("axes.seeds[%d]", i), Err: fmt.Errorf("%d is given twice", seed)}
		}
		seeds[seed] = true
	}
	return nil
}

// check says what is wrong with a workload's fields, as `capacity`
// checks its flags.
func (w Workload) check() error {
	if len(w.Files) == 0 {
		return errors.New("files: required: the specs to count (a Pod, Deployment, ReplicaSet, StatefulSet, Job or DaemonSet)")
	}
	for i, f := range w.Files {
		if f == "-" {
			return fmt.Errorf("files[%d]: '-' (stdin) is not a file a sweep can read again", i)
		}
	}
	if w.NodeTemplate == "-" {
		return errors.New("nodeTemplate: '-' (stdin) is not a file a sweep can read again")
	}
	if w.Max < 0 || w.AddNodes < 0 {
		return fmt.Errorf("max and addNodes must not be negative, got %d and %d", w.Max, w.AddNodes)
	}
	for i, r := range w.Replicas {
		if r < 0 {
			return fmt.Errorf("replicas[%d]: must not be negative, got %d", i, r)
		}
	}
	switch {
	case w.MinNodes && w.AddNodes > 0:
		return errors.New("minNodes finds how many nodes to add: give it or addNodes, not both")
	case (w.MinNodes || w.AddNodes > 0) && w.NodeTemplate == "":
		return errors.New("addNodes and minNodes need nodeTemplate: the Node manifest the added nodes are made from")
	case w.NodeTemplate != "" && !w.MinNodes && w.AddNodes == 0:
		return errors.New("nodeTemplate is used by addNodes or minNodes: give one of them")
	case w.MinNodes && len(w.Replicas) == 0:
		return errors.New("minNodes needs replicas: how many copies must fit")
	}
	return nil
}

func indexBracket(s string) int {
	if i := bytes.IndexByte([]byte(s), '['); i >= 0 {
		return i
	}
	return len(s)
}

// Records says whether the study's cells record kind (summary always).
func (s *Study) Records(kind string) bool {
	for _, r := range s.Record {
		if r == kind {
			return true
		}
	}
	return kind == RecordSummary
}

// resolve makes a study path absolute against the study's directory.
func resolve(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
