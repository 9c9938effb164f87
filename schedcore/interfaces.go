package schedcore

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Score bounds: every normalized score is in [MinNodeScore, MaxNodeScore].
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
	// MaxTotalScore bounds the weighted sum.
	MaxTotalScore int64 = 1<<63 - 1
)

// MaxPermitTimeout caps what a Permit plugin may ask to wait.
const MaxPermitTimeout = 15 * time.Minute

// Plugin is what every plugin implements. A plugin is a set of callbacks:
// it also implements one small interface per extension point it serves,
// asserted once when the profile is built.
type Plugin interface {
	Name() string
}

// PreEnqueuePlugin gates pods before they enter activeQ. A non-success
// status keeps the pod gated until one of the plugin's events arrives.
type PreEnqueuePlugin interface {
	Plugin
	PreEnqueue(ctx context.Context, pod *v1.Pod) *Status
}

// QueueSortPlugin orders activeQ. Exactly one is enabled per profile.
type QueueSortPlugin interface {
	Plugin
	Less(a, b *QueuedPodInfo) bool
}

// EnqueueExtensions is implemented by plugins that can reject pods: it lists
// the events that may make a rejected pod schedulable, with hints.
type EnqueueExtensions interface {
	Plugin
	EventsToRegister(ctx context.Context) ([]ClusterEventWithHint, error)
}

// PreFilterResult restricts the nodes to evaluate; nil NodeNames means all.
type PreFilterResult struct {
	NodeNames sets.Set[string]
}

// AllNodes reports whether the result does not restrict nodes.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// Merge intersects two results.
func (r *PreFilterResult) Merge(o *PreFilterResult) *PreFilterResult {
	if r.AllNodes() && o.AllNodes() {
		return nil
	}
	if r.AllNodes() {
		return &PreFilterResult{NodeNames: o.NodeNames.Clone()}
	}
	if o.AllNodes() {
		return &PreFilterResult{NodeNames: r.NodeNames.Clone()}
	}
	return &PreFilterResult{NodeNames: r.NodeNames.Intersection(o.NodeNames)}
}

// PreFilterPlugin runs once per cycle before the filters. Returning Skip
// skips the plugin's Filter for this cycle.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) (*PreFilterResult, *Status)
}

// PreFilterExtensions is implemented by PreFilter plugins whose cycle state
// depends on other pods: the framework calls AddPod/RemovePod when it
// simulates nominated pods or preemption victims on a node.
type PreFilterExtensions interface {
	Plugin
	AddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// FilterPlugin decides whether the pod fits a node. Runs in parallel over
// nodes: it must not write to the CycleState.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) *Status
}

// NominatingMode says what to do with the pod's nominated node.
type NominatingMode int

const (
	// ModeNoop leaves the nomination as it is.
	ModeNoop NominatingMode = iota
	// ModeOverride sets the nomination to NominatedNodeName.
	ModeOverride
)

// NominatingInfo is a PostFilter's nomination.
type NominatingInfo struct {
	NominatedNodeName string
	NominatingMode    NominatingMode
}

// PostFilterResult carries a PostFilter's nomination.
type PostFilterResult struct {
	*NominatingInfo
}

// PostFilterPlugin runs when no node fits (preemption).
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *v1.Pod, statuses *NodeToStatus) (*PostFilterResult, *Status)
}

// PreScorePlugin runs once per cycle over the feasible nodes before Score.
// Returning Skip skips the plugin's Score. nodes is the cycle's own list,
// valid until the cycle ends: a plugin must not keep it (the scheduler
// gives it to a later cycle).
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) *Status
}

// ScorePlugin ranks a feasible node. Runs in parallel over nodes.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) (int64, *Status)
}

// NodeLocalScorer is a ScorePlugin whose Score, for a cycle's pod, is a
// function of the node's contents alone (what its NodeInfo holds, versioned
// by its Generation) and of what ScoreKey writes. The framework then
// remembers the raw scores in [0, 65535] per key across cycles, and calls
// Score only for the nodes that changed since: consecutive pods of one
// workload see a cluster that differs by one placement.
type NodeLocalScorer interface {
	ScorePlugin
	// ScoreKey writes into k every input of Score but the node (the pod's
	// requests, tolerations, ...), read from the state PreScore wrote. It
	// runs once per cycle, after PreScore; false means the cycle's scores
	// are not remembered.
	ScoreKey(state *CycleState, pod *v1.Pod, k *MemoKey) bool
}

// UniformScorer is a ScorePlugin that can tell, after PreScore, that its
// Score is the same on every node this cycle (a pod without the plugin's
// kind of request, a cluster where nothing tells nodes apart for it). The
// framework then gives every node that raw score without calling Score;
// normalization and diagnosis see the same scores as if it had been
// called on each node.
type UniformScorer interface {
	ScorePlugin
	// UniformScore returns the score Score would return on every node of
	// the cycle (the snapshot's nodes and copies of them with nominated
	// pods added), read from the state PreScore wrote; false when it may
	// differ between nodes.
	UniformScore(state *CycleState, pod *v1.Pod) (int64, bool)
}

// NodeLocalFilter is a FilterPlugin whose Filter, for a cycle's pod, is a
// function of the node's contents alone (what its NodeInfo holds, versioned
// by its Generation) and of what FilterKey writes. The framework then
// remembers, per key, the nodes where Filter passed, and skips the plugin
// there until the node changes: consecutive pods of one workload are
// filtered again only on the nodes changed since, usually the previous
// placement. Rejections are not remembered (their statuses differ).
// The plugin's PreFilter state must not change after PreFilter (a plugin
// with PreFilterExtensions is never remembered).
type NodeLocalFilter interface {
	FilterPlugin
	// FilterKey writes into k every input of Filter but the node, read from
	// the state PreFilter wrote. It runs once per cycle, after PreFilter;
	// false means the cycle's verdicts are not remembered.
	FilterKey(state *CycleState, pod *v1.Pod, k *MemoKey) bool
}

// PassingFilter is a FilterPlugin that can tell from the pod alone that
// its Filter succeeds on every node (NodeName, for a pod without
// spec.nodeName). A cycle whose pod it passes leaves it out of the filters
// the filter loop runs: a success changes no status and no diagnosis.
// PassesEveryNode must hold for every node and every state of the pod's
// cycle, nominated pods added included.
type PassingFilter interface {
	FilterPlugin
	PassesEveryNode(pod *v1.Pod) bool
}

// PodBlindPlugin is an optional interface of PreFilter, Filter and
// PostFilter plugins. PodBlind reports, for pod, at which of the plugin's
// extension points its answer reads nothing of the cluster's other pods
// (bound, assumed, nominated or pending): it depends on pod, the nodes'
// objects and the cluster's other objects alone.
//
//   - BlindPreFilter: PreFilter's status and PreFilterResult (its cycle
//     state may read pods: only the plugin's own later calls read it).
//   - BlindFilter: Filter's status on a node, which reads the node's
//     object only (labels, fields, taints, spec.unschedulable) and, when
//     it rejects, is UnschedulableAndUnresolvable.
//   - BlindPostFilter: PostFilter's result and status when no node's
//     status is Unschedulable.
//
// A cycle that failed with every node rejected by blind filters (and only
// blind filters before them in the profile's order), in a profile whose
// PreFilter and PostFilter plugins are all blind for the pod, fails again
// with the same status whatever happens to the other pods, until a node or
// another object changes: a replay repeats such a failure instead of
// running it after each arrival, departure or placement
// (runtime.FailedAttempt.PodBlind). Answer a bit only when it is certain.
type PodBlindPlugin interface {
	Plugin
	PodBlind(pod *v1.Pod) PodBlindness
}

// PodBlindness says at which extension points a plugin is blind to the
// other pods (PodBlindPlugin).
type PodBlindness uint8

const (
	// BlindPreFilter: PreFilter's status and result.
	BlindPreFilter PodBlindness = 1 << iota
	// BlindFilter: Filter's status on each node.
	BlindFilter
	// BlindPostFilter: PostFilter's answer when no node is Unschedulable.
	BlindPostFilter
)

// NormalizeScorePlugin is implemented by score plugins whose raw scores need
// rescaling into [0, 100] once all nodes are scored (kube's NormalizeScore).
// NormalizeColumn gets the raw scores as a column, indexed like the nodes
// PreScore and Score were given (the feasible nodes), and rescales them in
// place; a plugin that needs to know which node a score is for keeps, in
// PreScore, what it needs by that index.
type NormalizeScorePlugin interface {
	ScorePlugin
	NormalizeColumn(ctx context.Context, state *CycleState, pod *v1.Pod, scores []int64) *Status
}

// ReservePlugin claims resources for the chosen node; Unreserve undoes it
// when a later step fails.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// PermitPlugin approves, rejects or delays (Wait, with a timeout) binding.
type PermitPlugin interface {
	Plugin
	Permit(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) (*Status, time.Duration)
}

// PreBindPlugin runs before binding (volume binding, for example).
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// PreBindPreFlightPlugin may tell the framework in the scheduling cycle
// whether PreBind has work to do (Skip = nothing to do).
type PreBindPreFlightPlugin interface {
	PreBindPlugin
	PreBindPreFlight(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// BindPlugin binds the pod. Skip passes to the next binder.
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
}

// PostBindPlugin is told of a successful binding.
type PostBindPlugin interface {
	Plugin
	PostBind(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
}

// GroupSummary is a group of pods placed all together or not at all, as a
// group plugin (Coscheduling) sums it up: its name and its quorum. It is not
// kube's framework.PodGroupInfo (the queued group entity).
type GroupSummary struct {
	// Name is "namespace/name".
	Name string
	// MinMember is how many of its pods must be placed for the group to be.
	MinMember int
}

// PodGroupPlugin is implemented by plugins that place pods in groups
// (Coscheduling's gangs). Drivers that report per group read the groups
// through Framework.PodGroup, never through a plugin's type; a group
// plugin marks the rejections it gives for a group's sake with
// Status.ForGroup.
type PodGroupPlugin interface {
	Plugin
	// PodGroup returns the pod's group; ok is false for a pod in no group.
	PodGroup(pod *v1.Pod) (g GroupSummary, ok bool)
}

// NodeScore is one node's score.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is scores indexed like the feasible node list.
type NodeScoreList []NodeScore

// PluginScore is one plugin's weighted, normalized score.
type PluginScore struct {
	Name  string
	Score int64
}

// NodePluginScores holds a node's per-plugin scores and their total.
type NodePluginScores struct {
	Name string
	// RawScores are the plugins' scores before normalization and weights.
	RawScores []PluginScore
	// Scores are the normalized scores multiplied by the plugins' weights.
	Scores     []PluginScore
	TotalScore int64
}

// QueuedPodInfo is a pod in the scheduling queue with its queueing history.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod was last added to the queue.
	Timestamp time.Time
	// Attempts counts scheduling attempts.
	Attempts int
	// UnschedulableCount counts attempts that ended unschedulable; drives backoff.
	UnschedulableCount int
	// ConsecutiveErrorsCount counts consecutive Error results.
	ConsecutiveErrorsCount int
	// InitialAttemptTimestamp is when the pod first entered activeQ.
	InitialAttemptTimestamp *time.Time
	// WasFlushedFromUnschedulable is set when the pod last left the
	// unschedulable pool because it stayed there too long rather than
	// because of an event; cleared when it comes back after an attempt.
	WasFlushedFromUnschedulable bool
	// FlushTimestamp is when the pod was last flushed from the
	// unschedulable pool; the next flush waits from then.
	FlushTimestamp time.Time
	// BackoffExpiration is when the pod's backoff ends.
	BackoffExpiration time.Time
	// UnschedulablePlugins rejected the pod in its last attempt.
	UnschedulablePlugins sets.Set[string]
	// PendingPlugins returned Pending in its last attempt.
	PendingPlugins sets.Set[string]
	// GatingPlugin is the PreEnqueue plugin that gates the pod, if any.
	GatingPlugin string
	// GatingPluginEvents are the events that may ungate it.
	GatingPluginEvents []ClusterEvent
	// Group is set when this entry stands for a pod group in the queue
	// (GenericWorkload): its queueing fields above are the group's (kube's
	// QueuedPodGroupInfo.QueueingParams), Group holds the PodGroup and the
	// queued members, and Pod is a stand-in naming the group (see
	// NewQueuedPodGroupInfo), never a pod to schedule.
	Group *QueuedPodGroupInfo
}

// Priority returns the pod's priority (0 when unset), or for a pod group
// entry the PodGroup's spec.priority (kube's QueuedPodGroupInfo.GetPriority),
// so that QueueSort plugins order pods and groups by the same keys.
func (q *QueuedPodInfo) Priority() int32 {
	if q.Group != nil {
		return PodGroupPriority(q.Group.Object)
	}
	return PodPriority(q.Pod)
}

// Gated reports whether a PreEnqueue plugin holds the pod.
func (q *QueuedPodInfo) Gated() bool { return q.GatingPlugin != "" }

// PodPriority returns spec.priority, or 0 when unset.
func PodPriority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// PreparePlugin is a plugin that keeps indexes over the snapshot across
// cycles, built on first use and then brought up to date node by node, and
// can build them before the first cycle. A driver that loads a cluster to
// explain a pod (explain) calls Prepare once the snapshot holds the
// cluster, as part of loading, so that the explanation does not pay for
// them; a driver that runs many cycles need not (its first cycle builds
// them). Prepare changes no decision: the indexes answer as they would
// have had the first cycle built them.
type PreparePlugin interface {
	Plugin
	Prepare(ctx context.Context, snap *Snapshot)
}
