package report

import "encoding/json"

// Explanation is `kubectl sched explain pod`'s machine-readable result: one
// scheduling cycle of one pod with every filter verdict per node and every
// score per plugin. Its JSON form is the documented schema (docs/explain.md);
// fields are only ever added.
type Explanation struct {
	// Pod is "namespace/name".
	Pod string `json:"pod"`
	// Profile is the schedulerName whose profile ran the cycle.
	Profile string `json:"profile"`
	// Source says where the pod came from: "snapshot", "cluster" or
	// "file" (a hypothetical pod from -f).
	Source string `json:"source"`
	// BoundNode is the node a pod already bound runs on; the pod is
	// explained as if it were pending (taken off its node).
	BoundNode string `json:"boundNode,omitempty"`
	// BoundNodeRank is BoundNode's rank among the feasible nodes (1 =
	// best), 0 when it is no longer feasible.
	BoundNodeRank int `json:"boundNodeRank,omitempty"`
	// BoundNodeTotal is BoundNode's total score when it is feasible.
	BoundNodeTotal *int64 `json:"boundNodeTotal,omitempty"`
	// NominatedNode is the pod's status.nominatedNodeName; explain evaluates
	// every node rather than trying it first.
	NominatedNode string `json:"nominatedNode,omitempty"`
	// PreEnqueue is set when a PreEnqueue plugin holds the pod out of the
	// scheduling queue (a scheduling gate, a ResourceClaim not created
	// yet): the pod gets no cycle, PreFilter's code is "NotRun" and every
	// node carries this status.
	PreEnqueue *PreFilterOutcome `json:"preEnqueue,omitempty"`
	// State says which cluster state was explained: "as-listed" (the dump
	// or listing as it is: pending pods are not placed) or "at-turn" (the
	// state at the pod's last attempt in a dry-run, explain --at-turn).
	State string `json:"state"`
	// Ahead, for "as-listed", is how many pending pods a dry-run would
	// schedule before this one; they are not placed in the state
	// explained, so a dry-run may answer differently.
	Ahead int `json:"ahead,omitempty"`
	// Turn, for "at-turn", is where in the dry-run the pod was explained.
	Turn *ExplainTurn `json:"turn,omitempty"`
	// AtTurn, for "as-listed" from a dump, says whether a dry-run of the
	// same dump agrees at the pod's turn (explain checks it when the
	// dry-run up to its turn is small enough; --check-turn=false skips it).
	AtTurn *TurnCheck `json:"atTurn,omitempty"`
	// PreFilter is the PreFilter phase's outcome.
	PreFilter PreFilterOutcome `json:"preFilter"`
	// SkippedFilterPlugins / SkippedScorePlugins were skipped by PreFilter /
	// PreScore for this pod.
	SkippedFilterPlugins []string `json:"skippedFilterPlugins"`
	SkippedScorePlugins  []string `json:"skippedScorePlugins"`
	// FilterPlugins are the profile's filters in order.
	FilterPlugins []string `json:"filterPlugins"`
	// ScorePluginWeights are the profile's score plugins and their weights.
	ScorePluginWeights map[string]int64 `json:"scorePluginWeights"`
	NumNodes           int              `json:"numNodes"`
	NumFeasible        int              `json:"numFeasible"`
	// Nodes are every node (or the one of --node), in name order.
	Nodes []ExplainNode `json:"nodes"`
	// Ranking lists the feasible nodes best first (ties by name).
	Ranking []string `json:"ranking"`
	// Selected is the node the scheduler would choose, "" when none fits:
	// the pod's nominated node when it passes the filters (kube tries it
	// first), else the best total.
	Selected string `json:"selected"`
	// TiedBest are the nodes sharing the best total; the lowest name wins
	// unless --seed is given.
	TiedBest []string `json:"tiedBest"`
	// BestTotal is the best total score (0 when none fits).
	BestTotal int64 `json:"bestTotal"`
	// Message is kube-scheduler's FitError text when no node fits, word
	// for word, without the PostFilter (preemption) suffix; "" otherwise.
	Message string `json:"message"`
	// Preemption is what DefaultPreemption would do for the pod when no
	// node fits; nil when the pod fits or the profile has no preemption.
	Preemption *PreemptionOutcome `json:"preemption,omitempty"`
	// Nearest are the rejected nodes closest to fitting (fewest failures,
	// then fewest unresolvable ones, then most free cpu, then memory), whose
	// gaps are filled in.
	Nearest []string `json:"nearest"`
}

// ExplainTurn is the pod's last scheduling attempt in a dry-run, the one
// explained and the one whose outcome the dry-run reports.
type ExplainTurn struct {
	// Attempt counts the pod's attempts (1 = its first).
	Attempt int `json:"attempt"`
	// PlacedBefore and EvictedBefore count the dry-run's placements and
	// evictions before that attempt.
	PlacedBefore  int `json:"placedBefore"`
	EvictedBefore int `json:"evictedBefore"`
	// Node is where the dry-run placed the pod, "" when it left it
	// unschedulable.
	Node string `json:"node,omitempty"`
}

// TurnCheck compares an explanation as listed with the pod's last attempt
// in a dry-run of the same state (explain --at-turn's answer).
type TurnCheck struct {
	// Checked is false when the dry-run was not run; Skipped says why
	// (too big: explain --at-turn runs it regardless).
	Checked bool   `json:"checked"`
	Skipped string `json:"skipped,omitempty"`
	// Agrees: the same verdict at its turn as listed (both schedulable, or
	// both not; Turn.Node may still differ from Selected).
	Agrees bool `json:"agrees"`
	// Turn is the pod's last attempt in the dry-run and where it placed
	// the pod ("" = unschedulable).
	Turn *ExplainTurn `json:"turn,omitempty"`
	// Message is kube's FitError message at its turn when it is
	// unschedulable there.
	Message string `json:"message,omitempty"`
	// NeverAttempted says why the dry-run gives the pod no scheduling
	// cycle (scheduling gates, a gang short of members).
	NeverAttempted string `json:"neverAttempted,omitempty"`
}

// PreFilterOutcome is the PreFilter phase's status.
type PreFilterOutcome struct {
	// Code is "Success", "Unschedulable", "UnschedulableAndUnresolvable"
	// ("NotRun" for PreFilter when PreEnqueue held the pod).
	Code   string `json:"code"`
	Plugin string `json:"plugin"`
	Reason string `json:"reason"`
}

// ExplainNode is one node's verdict. An explanation holds thousands of
// them, so what most nodes do not have, or have alike, is held by pointer:
// the failures (rejected nodes that read alike share them), the scores
// (nodes that score alike share them) and the gaps and free resources
// (only the nodes shown have them). In an explanation that explain returns
// no pointer is nil (the nodes without share an empty one), so the fields
// they hold read as fields of the node; they are read only, and a node is
// given other ones by replacing the pointer. The JSON form is that of one
// flat object.
type ExplainNode struct {
	Node     string `json:"node"`
	Feasible bool   `json:"feasible"`
	*NodeFailures
	*NodeScores
	// Rank is the node's place in Ranking (1 = best; feasible nodes only).
	Rank int `json:"rank,omitempty"`
	*NodeDetail
}

// NodeFailures are a rejected node's failures. A pointer rather than the
// list in ExplainNode itself: 16 bytes less a node, where the nodes of an
// explanation, allocated afresh each time, were half of what it allocated.
type NodeFailures struct {
	// Failures are every filter that rejects the node, in filter order.
	Failures []Failure `json:"failures,omitempty"`
}

// NodeScores are a feasible node's scores.
type NodeScores struct {
	// Scores are per plugin, normalized and weighted; they add up to Total.
	// Each of the three is written as a map from plugin name to score.
	Scores ScoreMap `json:"scores,omitzero"`
	// RawScores are what each plugin's Score returned.
	RawScores ScoreMap `json:"rawScores,omitzero"`
	// NormalizedScores are after NormalizeScore, before the weight.
	NormalizedScores ScoreMap `json:"normalizedScores,omitzero"`
	// Total is the node's total score (feasible nodes only).
	Total *int64 `json:"total,omitempty"`
}

// NodeDetail is what the report shows of the nodes it details (the
// nearest rejected nodes, --node).
type NodeDetail struct {
	// Gaps say what would make the pod fit, per failing plugin (for the
	// nearest nodes and for --node).
	Gaps []Gap `json:"gaps,omitempty"`
	// Free is what the node has left (cpu in millicores, memory in bytes,
	// pods as a count), for the nearest nodes and --node.
	Free map[string]int64 `json:"free,omitempty"`
}

// noFailures, noScores and noDetail are what the renderers read of a node
// without failures, scores or detail (read only).
var (
	noFailures NodeFailures
	noScores   NodeScores
	noDetail   NodeDetail
)

// failures returns n's failures, an empty list when it has none.
func (n *ExplainNode) failures() []Failure {
	if n.NodeFailures == nil {
		return noFailures.Failures
	}
	return n.Failures
}

// scores returns n's scores, empty ones when it has none.
func (n *ExplainNode) scores() *NodeScores {
	if n.NodeScores == nil {
		return &noScores
	}
	return n.NodeScores
}

// detail returns n's gaps and free resources, empty ones when it has none.
func (n *ExplainNode) detail() *NodeDetail {
	if n.NodeDetail == nil {
		return &noDetail
	}
	return n.NodeDetail
}

// UnmarshalJSON reads a node as explain writes it, giving it its own
// failures, scores and detail, so that a decoded node's fields read like a
// returned one's even when the JSON has none of them.
func (n *ExplainNode) UnmarshalJSON(b []byte) error {
	type plain ExplainNode // without this method
	p := plain{NodeFailures: &NodeFailures{}, NodeScores: &NodeScores{}, NodeDetail: &NodeDetail{}}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*n = ExplainNode(p)
	return nil
}

// Failure is one filter plugin's rejection of a node.
type Failure struct {
	Plugin string `json:"plugin"`
	Reason string `json:"reason"`
	// Code is "Unschedulable" (preemption may help) or
	// "UnschedulableAndUnresolvable" (it cannot).
	Code string `json:"code"`
	// First marks the failure kube-scheduler reports (the filter it stops at).
	First bool `json:"first"`
}

// Gap is a concrete reason a node rejects the pod, and so what would have to
// change: "needs 250m cpu more (free 750m of 4)". The plugin says it
// (schedcore.FilterExplainer), from the cycle state its Filter read.
type Gap struct {
	Plugin string `json:"plugin"`
	Gap    string `json:"gap"`
	// Details are lines under the gap: one per device, claim, PV or pod
	// involved ("gpu-1: allocated to ml/trainer-0").
	Details []string `json:"details,omitempty"`
}

// PreemptionOutcome is explain's preemption dry run: the node preemption
// would nominate and the pods it would evict, nothing evicted.
type PreemptionOutcome struct {
	// Node is the candidate node, "" when preemption cannot help.
	Node string `json:"node"`
	// Victims are the pods it would evict ("namespace/name"), most
	// important first.
	Victims []string `json:"victims"`
	// PDBViolations counts victims whose eviction violates a
	// PodDisruptionBudget.
	PDBViolations int `json:"pdbViolations"`
	// Message is kube-scheduler's PostFilter text, word for word
	// ("preemption: ..."); the pod's full FitError message is Message, a
	// space, and this.
	Message string `json:"message"`
}
