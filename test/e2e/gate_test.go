package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// gateLabel marks the pods the gate holds in PreBind.
const gateLabel = "kubectl-sched.io/e2e-gate"

// gatePluginName is the test PreBind plugin that holds pods in their
// binding cycle until the test opens the gate: the window between the
// scheduling decision (the pod assumed on its node) and the binding.
const gatePluginName = "E2EGate"

// gateConfig enables the gate in the one profile.
const gateConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    preBind:
      enabled: [{name: ` + gatePluginName + `}]
`

// gate holds pods labelled gateLabel in PreBind until released.
type gate struct {
	mu      sync.Mutex
	reached map[string]chan struct{} // closed when the pod is held
	release map[string]chan struct{} // closed to let it go on
	nodes   map[string]string        // where a held pod was assumed
}

func newGate() *gate {
	return &gate{reached: map[string]chan struct{}{}, release: map[string]chan struct{}{}, nodes: map[string]string{}}
}

func (g *gate) chans(pod string) (reached, release chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reached[pod] == nil {
		g.reached[pod], g.release[pod] = make(chan struct{}), make(chan struct{})
	}
	return g.reached[pod], g.release[pod]
}

// registry registers the gate plugin for startRun.
func (g *gate) registry() schedcore.Registry {
	return schedcore.Registry{gatePluginName: {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
		return &gatePlugin{g: g}, nil
	}}}
}

// wait blocks until the pod is held in PreBind and returns the node it
// was assumed on.
func (g *gate) wait(t *testing.T, pod string) string {
	t.Helper()
	reached, _ := g.chans(pod)
	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Fatalf("pod %s never reached PreBind", pod)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nodes[pod]
}

// open lets the held pod go on to Bind.
func (g *gate) open(pod string) {
	_, release := g.chans(pod)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-release:
	default:
		close(release)
	}
}

type gatePlugin struct{ g *gate }

var _ schedcore.PreBindPlugin = (*gatePlugin)(nil)

func (p *gatePlugin) Name() string { return gatePluginName }

func (p *gatePlugin) PreBind(ctx context.Context, _ *schedcore.CycleState, pod *v1.Pod, node string) *schedcore.Status {
	if pod.Labels[gateLabel] == "" {
		return nil
	}
	reached, release := p.g.chans(pod.Name)
	p.g.mu.Lock()
	p.g.nodes[pod.Name] = node
	select {
	case <-reached:
	default:
		close(reached)
	}
	p.g.mu.Unlock()
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return schedcore.AsStatus(ctx.Err())
	}
}
