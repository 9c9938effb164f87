// Package featuregates is kube-scheduler v1.37.2's --feature-gates: the
// gates its binary accepts, with their defaults, stages and locks at 1.37
// (zz_generated.gates.go, written by hack/kubebench/featuregates from
// kube's own registrations), parsed and validated by component-base's
// featuregate, the library kube-scheduler uses, so that an unknown gate, a
// locked one or a missing dependency fails with kube's words. The engine
// reads the result as a plain schedcore.Features (Gates.Features).
//
// The KubeSchedulerConfiguration has no field for gates: kube-scheduler
// takes them only on its command line, and so do the verbs.
package featuregates

//go:generate sh -c "cd ../../hack/kubebench && go run ./featuregates > ../../internal/featuregates/zz_generated.gates.go"

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/component-base/featuregate"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Gate is one gate as kube-scheduler v1.37.2 has it.
type Gate struct {
	Name string
	// Default is its value unless set.
	Default bool
	// LockToDefault: setting it to the other value is an error.
	LockToDefault bool
	// Stage is featuregate's word: "ALPHA", "BETA", "" (GA) or
	// "DEPRECATED".
	Stage string
}

// StageName is the stage as docs and tables write it: ALPHA, BETA, GA or
// DEPRECATED.
func (g Gate) StageName() string {
	if g.Stage == "" {
		return "GA"
	}
	return g.Stage
}

// Known returns every gate kube-scheduler v1.37.2 accepts (AllAlpha and
// AllBeta aside), by name.
func Known() []Gate {
	out := make([]Gate, 0, len(specs))
	for name, s := range specs {
		out = append(out, Gate{Name: string(name), Default: s.Default, LockToDefault: s.LockToDefault, Stage: string(s.PreRelease)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the gate of that name.
func Lookup(name string) (Gate, bool) {
	s, ok := specs[featuregate.Feature(name)]
	if !ok {
		return Gate{}, false
	}
	return Gate{Name: name, Default: s.Default, LockToDefault: s.LockToDefault, Stage: string(s.PreRelease)}, true
}

// Depends returns the gates that name needs enabled when it is.
func Depends(name string) []string {
	var out []string
	for _, d := range dependencies[featuregate.Feature(name)] {
		out = append(out, string(d))
	}
	return out
}

// Gates is a set of kube-scheduler's feature gates: its defaults, with
// what Set and SetFromMap changed.
type Gates struct {
	fg       gate
	warnings []string
}

// gate is component-base's feature gate, with the setter that takes the
// logger its warnings go to.
type gate interface {
	featuregate.MutableVersionedFeatureGate
	SetFromMapWithLogger(logger logr.Logger, m map[string]bool) error
}

// New returns the gates at kube-scheduler v1.37.2's defaults.
func New() *Gates {
	var fg gate = featuregate.NewFeatureGate()
	if err := fg.Add(specs); err != nil {
		panic(fmt.Sprintf("featuregates: the generated table: %v", err))
	}
	deps := make(map[featuregate.Feature][]featuregate.Feature, len(dependencies))
	for k, v := range dependencies {
		deps[k] = append([]featuregate.Feature(nil), v...)
	}
	if err := fg.AddDependencies(deps); err != nil {
		panic(fmt.Sprintf("featuregates: the generated dependencies: %v", err))
	}
	return &Gates{fg: fg}
}

// Parse returns the gates a --feature-gates value sets (see Set).
func Parse(value string) (*Gates, error) {
	g := New()
	if err := g.Set(value); err != nil {
		return nil, err
	}
	return g, nil
}

// Set applies a --feature-gates value as kube-scheduler reads its flag:
// comma-separated NAME=BOOL pairs, spaces around names and values
// ignored, each optionally prefixed with its component, which must be
// "kube" (the flag's values joined with commas when it is repeated). The
// errors are kube's words; of several unknown gates the first by name is
// named, and several other errors are listed sorted, so the same input
// always gives the same line.
func (g *Gates) Set(value string) error {
	// cliflag.ColonSeparatedMultimapStringString, as
	// componentGlobalsRegistry's --feature-gates: COMPONENT:PAIR or PAIR,
	// trimmed; the kube component's pairs are then featuregate's Set.
	var pairs []string
	prefixed, plain := false, false
	for _, s := range strings.Split(value, ",") {
		if len(s) == 0 {
			continue
		}
		if comp, rest, ok := strings.Cut(s, ":"); ok {
			if comp = strings.TrimSpace(comp); comp != "kube" {
				return fmt.Errorf("component not registered: %s", comp)
			}
			prefixed, s = true, rest
		} else {
			plain = true
		}
		pairs = append(pairs, strings.TrimSpace(s))
	}
	if prefixed && plain {
		return fmt.Errorf("set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use")
	}
	// featuregate's SetWithLogger.
	m := map[string]bool{}
	for _, s := range pairs {
		if len(s) == 0 {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok {
			return fmt.Errorf("missing bool value for %s", k)
		}
		v = strings.TrimSpace(v)
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("invalid value of %s=%s, err: %v", k, v, err)
		}
		m[k] = b
	}
	return g.SetFromMap(m)
}

// SetFromMap sets the gates of m, as a study's featureGates give them.
func (g *Gates) SetFromMap(m map[string]bool) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if _, known := specs[featuregate.Feature(k)]; !known && k != "AllAlpha" && k != "AllBeta" {
			// featuregate's own words, for the first by name (it names
			// whichever its map gives first).
			return fmt.Errorf("unrecognized feature gate: %s", k)
		}
	}
	sink := &warnings{}
	err := g.fg.SetFromMapWithLogger(logr.New(sink), m)
	g.warnings = append(g.warnings, sink.lines...)
	if err == nil {
		return nil
	}
	var errs []string
	if agg, ok := err.(interface{ Errors() []error }); ok && len(agg.Errors()) > 1 {
		for _, e := range agg.Errors() {
			errs = append(errs, e.Error())
		}
		sort.Strings(errs)
		return fmt.Errorf("[%s]", strings.Join(errs, ", "))
	}
	return err
}

// Enabled reports whether the gate of that name is on; an unknown name is
// off.
func (g *Gates) Enabled(name string) bool {
	if _, ok := specs[featuregate.Feature(name)]; !ok {
		return false
	}
	return g.fg.Enabled(featuregate.Feature(name))
}

// Warnings are what kube-scheduler logs as it sets the gates: a GA or
// deprecated gate set ("setting GA feature gate X=true. It will be
// removed in a future release."), in the order set.
func (g *Gates) Warnings() []string { return g.warnings }

// Features returns the gates the engine reads, as schedcore.Features:
// each of its fields is the gate of the same name.
func (g *Gates) Features() schedcore.Features {
	var f schedcore.Features
	v := reflect.ValueOf(&f).Elem()
	for _, i := range engineFields {
		v.Field(i).SetBool(g.Enabled(v.Type().Field(i).Name))
	}
	return f
}

// Default is kube-scheduler v1.37.2's defaults as schedcore.Features
// (schedcore.DefaultFeatures, which a test checks against this).
func Default() schedcore.Features { return New().Features() }

// engineFields are the indexes of schedcore.Features' gate fields: every
// bool field (a test checks each names a gate).
var engineFields = func() []int {
	t := reflect.TypeOf(schedcore.Features{})
	var out []int
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type.Kind() == reflect.Bool && t.Field(i).IsExported() {
			out = append(out, i)
		}
	}
	return out
}()

// EngineGates returns the names of the gates the engine reads
// (schedcore.Features' fields), sorted.
func EngineGates() []string {
	t := reflect.TypeOf(schedcore.Features{})
	out := make([]string, 0, len(engineFields))
	for _, i := range engineFields {
		out = append(out, t.Field(i).Name)
	}
	sort.Strings(out)
	return out
}

// warnings is a logr sink keeping featuregate's warnings ("Warning:
// setting GA feature gate. ...", with the gate and value) as lines.
type warnings struct{ lines []string }

func (w *warnings) Init(logr.RuntimeInfo)  {}
func (w *warnings) Enabled(level int) bool { return level == 0 }
func (w *warnings) Info(level int, msg string, kv ...any) {
	rest, ok := strings.CutPrefix(msg, "Warning: ")
	if level != 0 || !ok {
		return
	}
	var gate, value any
	for i := 0; i+1 < len(kv); i += 2 {
		switch kv[i] {
		case "featureGate":
			gate = kv[i+1]
		case "value":
			value = kv[i+1]
		}
	}
	// "setting GA feature gate. It will be removed in a future release."
	// with the gate: "setting GA feature gate X=true. It will be ...".
	if head, tail, ok := strings.Cut(rest, ". "); ok && gate != nil {
		rest = fmt.Sprintf("%s %v=%v. %s", head, gate, value, tail)
	}
	w.lines = append(w.lines, rest)
}
func (w *warnings) Error(error, string, ...any)    {}
func (w *warnings) WithValues(...any) logr.LogSink { return w }
func (w *warnings) WithName(string) logr.LogSink   { return w }
