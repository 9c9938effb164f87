package schedcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// Config defaults, as kube-scheduler v1.37's v1 defaults.
const (
	DefaultPodInitialBackoffSeconds = 1
	DefaultPodMaxBackoffSeconds     = 10
)

// LoadConfigFile reads a KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1) from a YAML or JSON file. Unknown fields
// are errors naming the file and field.
func LoadConfigFile(path string) (*configv1.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := DecodeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// DecodeConfig decodes a KubeSchedulerConfiguration strictly.
func DecodeConfig(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	if tm.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("kind: want KubeSchedulerConfiguration, got %q", tm.Kind)
	}
	if tm.APIVersion != configv1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("apiVersion: want %s, got %q", configv1.SchemeGroupVersion, tm.APIVersion)
	}
	cfg := &configv1.KubeSchedulerConfiguration{}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return nil, fmt.Errorf("decoding: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return cfg, nil
}

// SetConfigDefaults applies kube's v1 defaults: parallelism 16, backoff 1s
// and 10s, one "default-scheduler" profile when none, and every profile's
// plugins merged over defaultPlugins with kube's rules.
func SetConfigDefaults(cfg *configv1.KubeSchedulerConfiguration, defaultPlugins func() *configv1.Plugins) {
	if cfg.Parallelism == nil {
		cfg.Parallelism = ptr[int32](DefaultParallelism)
	}
	if cfg.PercentageOfNodesToScore == nil {
		cfg.PercentageOfNodesToScore = ptr[int32](0)
	}
	if cfg.PodInitialBackoffSeconds == nil {
		cfg.PodInitialBackoffSeconds = ptr[int64](DefaultPodInitialBackoffSeconds)
	}
	if cfg.PodMaxBackoffSeconds == nil {
		cfg.PodMaxBackoffSeconds = ptr[int64](DefaultPodMaxBackoffSeconds)
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = []configv1.KubeSchedulerProfile{{}}
	}
	if len(cfg.Profiles) == 1 && cfg.Profiles[0].SchedulerName == nil {
		cfg.Profiles[0].SchedulerName = ptr(v1.DefaultSchedulerName)
	}
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		if p.SchedulerName == nil {
			p.SchedulerName = ptr(v1.DefaultSchedulerName)
		}
		p.Plugins = MergePlugins(defaultPlugins(), p.Plugins)
	}
}

// ValidateConfig checks the top-level fields and profiles, with field paths.
func ValidateConfig(cfg *configv1.KubeSchedulerConfiguration) error {
	var errs []string
	if cfg.Parallelism != nil && *cfg.Parallelism <= 0 {
		errs = append(errs, fmt.Sprintf("parallelism: Invalid value: %d: should be an integer value greater than zero", *cfg.Parallelism))
	}
	checkPct := func(path string, v *int32) {
		if v != nil && (*v < 0 || *v > 100) {
			errs = append(errs, fmt.Sprintf("%s: Invalid value: %d: not in valid range [0-100]", path, *v))
		}
	}
	checkPct("percentageOfNodesToScore", cfg.PercentageOfNodesToScore)
	if cfg.PodInitialBackoffSeconds != nil && *cfg.PodInitialBackoffSeconds <= 0 {
		errs = append(errs, fmt.Sprintf("podInitialBackoffSeconds: Invalid value: %d: must be greater than 0", *cfg.PodInitialBackoffSeconds))
	}
	if cfg.PodMaxBackoffSeconds != nil && cfg.PodInitialBackoffSeconds != nil && *cfg.PodMaxBackoffSeconds < *cfg.PodInitialBackoffSeconds {
		errs = append(errs, fmt.Sprintf("podMaxBackoffSeconds: Invalid value: %d: must be greater than or equal to PodInitialBackoffSeconds", *cfg.PodMaxBackoffSeconds))
	}
	seen := sets.New[string]()
	for i, p := range cfg.Profiles {
		path := fmt.Sprintf("profiles[%d]", i)
		name := ""
		if p.SchedulerName != nil {
			name = *p.SchedulerName
		}
		if name == "" {
			errs = append(errs, path+".schedulerName: Required value")
		} else if seen.Has(name) {
			errs = append(errs, fmt.Sprintf("%s.schedulerName: Duplicate value: %q", path, name))
		}
		seen.Insert(name)
		checkPct(path+".percentageOfNodesToScore", p.PercentageOfNodesToScore)
		if p.Plugins != nil {
			for _, ps := range pluginSets(p.Plugins) {
				for j, e := range ps.set.Enabled {
					if e.Weight != nil && *e.Weight < 0 {
						errs = append(errs, fmt.Sprintf("%s.plugins.%s.enabled[%d].weight: Invalid value: %d: must be a non-negative integer", path, ps.field, j, *e.Weight))
					}
					if e.Weight != nil && *e.Weight > 0 && ps.field != "score" && ps.field != "placementScore" && ps.field != "multiPoint" {
						errs = append(errs, fmt.Sprintf("%s.plugins.%s.enabled[%d].weight: Invalid value: %d: only score plugins take a weight", path, ps.field, j, *e.Weight))
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// MergePlugins merges custom plugin sets into defaults per extension point
// with kube's mergePluginSet rules: disabled ("*" = all defaults) drops
// defaults, a re-listed default is replaced in place, new ones are appended.
func MergePlugins(defaults, custom *configv1.Plugins) *configv1.Plugins {
	if custom == nil {
		return defaults
	}
	d, c := pluginSets(defaults), pluginSets(custom)
	for i := range d {
		*d[i].set = mergePluginSet(*d[i].set, *c[i].set)
	}
	return defaults
}

func mergePluginSet(def, cus configv1.PluginSet) configv1.PluginSet {
	disabled := sets.New[string]()
	var dis []configv1.Plugin
	for _, p := range cus.Disabled {
		dis = append(dis, configv1.Plugin{Name: p.Name})
		disabled.Insert(p.Name)
	}
	for _, p := range def.Disabled {
		dis = append(dis, configv1.Plugin{Name: p.Name})
		disabled.Insert(p.Name)
	}
	custom := map[string]int{}
	for i, p := range cus.Enabled {
		custom[p.Name] = i
	}
	replaced := sets.New[int]()
	var en []configv1.Plugin
	if !disabled.Has("*") {
		for _, p := range def.Enabled {
			if disabled.Has(p.Name) {
				continue
			}
			if i, ok := custom[p.Name]; ok {
				p = cus.Enabled[i]
				replaced.Insert(i)
			}
			en = append(en, p)
		}
	}
	for i, p := range cus.Enabled {
		if !replaced.Has(i) {
			en = append(en, p)
		}
	}
	return configv1.PluginSet{Enabled: en, Disabled: dis}
}

func ptr[T any](v T) *T { return &v }

// EnabledPlugins names every plugin some extension point of p enables.
func EnabledPlugins(p *configv1.Plugins) sets.Set[string] {
	s := sets.New[string]()
	for _, ps := range pluginSets(p) {
		for _, e := range ps.set.Enabled {
			s.Insert(e.Name)
		}
	}
	return s
}

type namedSet struct {
	field string
	set   *configv1.PluginSet
}

func pluginSets(p *configv1.Plugins) []namedSet {
	return []namedSet{
		{"multiPoint", &p.MultiPoint}, {"preEnqueue", &p.PreEnqueue}, {"queueSort", &p.QueueSort}, {"preFilter", &p.PreFilter},
		{"filter", &p.Filter}, {"postFilter", &p.PostFilter}, {"preScore", &p.PreScore}, {"score", &p.Score},
		{"reserve", &p.Reserve}, {"permit", &p.Permit}, {"preBind", &p.PreBind}, {"bind", &p.Bind}, {"postBind", &p.PostBind},
		{"placementGenerate", &p.PlacementGenerate}, {"placementScore", &p.PlacementScore}, {"podGroupPostFilter", &p.PodGroupPostFilter},
	}
}
