package schedcore

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FilterExplainer is implemented by filter plugins that say, for a node
// their Filter rejected, what stands in the way and what would make the
// pod fit there: the cpu missing, the taint not tolerated, the zone whose
// skew is too high, the device that is taken.
//
// ExplainFilter gets exactly what Filter got on that node: the same
// CycleState (after PreFilter, with the pods nominated to the node added
// when Filter counted them), the pod, the NodeInfo, and the status Filter
// returned (for a node a PreFilterResult left out, the framework's status
// naming the plugin). It reads the plugin's own cycle state, so the
// numbers are the ones Filter saw; it never re-derives the plugin's rule
// from the pod's fields. It runs only for rejected nodes, outside the hot
// path, so it may allocate and format. A nil result means the plugin has
// nothing to add to its reason.
type FilterExplainer interface {
	FilterPlugin
	ExplainFilter(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo, status *Status) *FilterExplanation
}

// ShortfallExplainer is a FilterExplainer that can say how far a node is
// from passing without the gaps' texts. explain ranks every rejected node
// by shortfall to pick the few it prints, and formats the gaps of those
// only: on thousands of rejected nodes the texts would be most of its time.
//
// FilterShortfall gets ExplainFilter's arguments and returns exactly the
// Shortfall of ExplainFilter's result, 1 where that result is nil (plugins
// test the two against each other: plugins/shortfall_test.go). A plugin
// whose shortfall is always 1 returns 1.
type ShortfallExplainer interface {
	FilterExplainer
	FilterShortfall(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo, status *Status) float64
}

// FilterExplanation is one plugin's account of one rejected node.
type FilterExplanation struct {
	// Gaps are what stands in the way, one per obstacle, in the plugin's
	// order (the Filter's order of checks).
	Gaps []Gap
	// Shortfall ranks how far the node is from passing this plugin: the
	// share of what the pod needs here that the node lacks, in (0, 1]
	// (0.25: a quarter of the requested cpu is missing; 1: none of it is
	// there, freeing room on the node cannot close the gap, or the plugin
	// has no finer measure). Among nodes failing as many plugins, as many
	// of them unresolvably, explain ranks the lower summed shortfall
	// nearer; 0 is read as 1.
	Shortfall float64
}

// Gap is one obstacle on one node, with what would remove it.
type Gap struct {
	// Text is one short line: "needs 250m cpu more (free 750m of 4)",
	// "needs 2 free devices of class gpu.example.com; the node has 1".
	Text string
	// Details are optional lines under Text: one per device, claim, PV or
	// pod involved ("gpu-1: allocated to ml/trainer-0").
	Details []string
}

// NewFilterExplanation is an explanation with one gap per text and the
// given shortfall.
func NewFilterExplanation(shortfall float64, texts ...string) *FilterExplanation {
	e := &FilterExplanation{Shortfall: shortfall, Gaps: make([]Gap, len(texts))}
	for i, t := range texts {
		e.Gaps[i].Text = t
	}
	return e
}

// ShortfallOf is missing/wanted clamped into (0, 1]: the share of a
// request a node lacks.
func ShortfallOf(missing, wanted int64) float64 {
	if wanted <= 0 || missing >= wanted {
		return 1
	}
	if missing <= 0 {
		return 0
	}
	return float64(missing) / float64(wanted)
}

// PostFilterExplainer is implemented by PostFilter plugins that can say
// what they would do for a pod no node fits, without doing it (explain's
// preemption dry run). ExplainPostFilter gets a clone of the failed
// cycle's state and the nodes' statuses, as PostFilter would; it must not
// act on the cluster. Nil means the plugin has nothing to say (it failed
// internally, or does not apply).
type PostFilterExplainer interface {
	PostFilterPlugin
	ExplainPostFilter(ctx context.Context, state *CycleState, pod *v1.Pod, statuses *NodeToStatus) *PostFilterExplanation
}

// PostFilterExplanation is what a PostFilter plugin would do.
type PostFilterExplanation struct {
	// Node is the node it would nominate; "" when it cannot help.
	Node string
	// Victims are the pods it would evict, most important first.
	Victims []*v1.Pod
	// PDBViolations counts victims whose eviction violates a
	// PodDisruptionBudget.
	PDBViolations int
	// Message is the plugin's status message, word for word as it would
	// follow kube's FitError message.
	Message string
}

// UnitShortfall reads a plugin's shortfall as explain ranks it: a
// positive value as it is, anything else (0: no finer measure) as 1.
func UnitShortfall(s float64) float64 {
	if s > 0 {
		return s
	}
	return 1
}

// FormatQuantity renders an amount of a resource for people: cpu from
// millicores ("250m", "4"), memory, ephemeral storage and hugepages from
// bytes ("512Mi"), anything else as a count.
func FormatQuantity(name v1.ResourceName, v int64) string {
	switch name {
	case v1.ResourceCPU:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case v1.ResourceMemory, v1.ResourceEphemeralStorage:
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	if strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) {
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return fmt.Sprint(v)
}
