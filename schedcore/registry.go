package schedcore

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
)

// PluginFactory builds a plugin from its args (a versioned
// k8s.io/kube-scheduler/config/v1 args type, or nil) and the handle. The
// factory applies defaults to the args and validates them; a validation error
// names the field relative to the args ("scoringStrategy.type: ...").
type PluginFactory func(ctx context.Context, args runtime.Object, h *Handle) (Plugin, error)

// PluginSpec registers a plugin: its factory and, when it takes args, a
// constructor for an empty args object that the config loader decodes into.
type PluginSpec struct {
	Factory PluginFactory
	NewArgs func() runtime.Object
}

// Registry maps plugin names to their specs.
type Registry map[string]PluginSpec

// Register adds a plugin; a duplicate name is an error.
func (r Registry) Register(name string, spec PluginSpec) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("a plugin named %v already exists", name)
	}
	r[name] = spec
	return nil
}

// Merge adds every plugin of o; duplicates are an error.
func (r Registry) Merge(o Registry) error {
	for name, spec := range o {
		if err := r.Register(name, spec); err != nil {
			return err
		}
	}
	return nil
}

// Names lists the registered plugins, sorted.
func (r Registry) Names() []string {
	out := make([]string, 0, len(r))
	for n := range r {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
