package report

// CapacityAPIVersion versions the machine-readable capacity and drain
// reports: fields are only ever added within a version; a change of
// meaning or a removal is a new version.
const CapacityAPIVersion = "kubectl-sched/v1"

// Capacity is `kubectl sched capacity`'s machine-readable result (schema:
// docs/capacity.md).
type Capacity struct {
	APIVersion string `json:"apiVersion"`
	// Kind is "Capacity".
	Kind string `json:"kind"`
	// Source is where the cluster state came from: "snapshot" or "cluster".
	Source string `json:"source"`
	// Nodes counts the cluster's nodes; AddedNodes the template nodes
	// added to them (--add-nodes, or the count --min-nodes found).
	Nodes      int `json:"nodes"`
	AddedNodes int `json:"addedNodes"`
	// NodeTemplate names the template node (--node-template), if any.
	NodeTemplate string `json:"nodeTemplate,omitempty"`
	// Specs are the workloads in the order they were placed.
	Specs []CapacitySpec `json:"specs"`
	// MinNodes is the --min-nodes search, when asked.
	MinNodes *MinNodes `json:"minNodes,omitempty"`
	// Leftover is what the nodes have left once every spec is placed.
	Leftover Leftover `json:"leftover"`
	// Complete is false when a spec with --replicas did not get them all
	// (exit status 3).
	Complete bool `json:"complete"`
}

// Ways a spec's count ends (CapacitySpec.LimitedBy).
const (
	// LimitedByFit: the next copy fits on no node (StoppedBy says why).
	LimitedByFit = "fit"
	// LimitedByReplicas: --replicas copies were placed.
	LimitedByReplicas = "replicas"
	// LimitedByMax: --max copies were placed.
	LimitedByMax = "max"
	// LimitedByNodes: a DaemonSet has one copy per node it targets.
	LimitedByNodes = "nodes"
)

// How a count was made (CapacitySpec.Method).
const (
	// MethodCycles: each copy went through the scheduling cycle in turn.
	MethodCycles = "cycles"
	// MethodNodeLocal: every plugin that can reject the pod is node-local
	// for it, so the copies were counted node by node with the same
	// Filter plugins (the same count; see docs/capacity.md).
	MethodNodeLocal = "node-local"
)

// CapacitySpec is one workload's count.
type CapacitySpec struct {
	// Name is "namespace/name"; Kind the object's kind (PodGroup for a
	// gang); Profile the schedulerName of its pods.
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Profile string `json:"profile"`
	// Unit is "pods", or "groups" for a gang (PodsPerGroup pods each).
	Unit         string `json:"unit"`
	PodsPerGroup int    `json:"podsPerGroup,omitempty"`
	// Replicas is the number asked for with --replicas (0: as many as fit).
	Replicas int `json:"replicas,omitempty"`
	// Count is how many copies were placed, one after another, before the
	// first that fits nowhere (or the limit).
	Count int `json:"count"`
	// LimitedBy says what ended the count: fit, replicas, max or nodes.
	LimitedBy string `json:"limitedBy"`
	// Method is how the count was made: cycles or node-local.
	Method string `json:"method"`
	// Nodes is how many pods landed on each node (nodes with none are
	// left out).
	Nodes map[string]int `json:"nodes"`
	// NodesNote says why Nodes is empty when --min-nodes's report does
	// not work out where a large count of copies would land.
	NodesNote string `json:"nodesNote,omitempty"`
	// Zones is the same by topology.kubernetes.io/zone ("" for nodes
	// without the label); Labels by each --group-by label.
	Zones  map[string]int            `json:"zones"`
	Labels map[string]map[string]int `json:"labels,omitempty"`
	// StoppedBy is kube-scheduler's FitError message for the next copy
	// when LimitedBy is "fit".
	StoppedBy string `json:"stoppedBy,omitempty"`
	// Nearest are, for that next copy, the rejected nodes nearest to
	// fitting and what would make it fit there (explain's gaps).
	Nearest []NearNode `json:"nearest,omitempty"`
	// NotPlaced are a DaemonSet's nodes where its pod does not fit, with
	// the scheduler's message.
	NotPlaced []NodeMessage `json:"notPlaced,omitempty"`
	// Cycle is "pod-group" when the copies went through kube's pod-group
	// cycle (GenericWorkload on; a scheduling.k8s.io PodGroup or a
	// Workload) and "coscheduling" for a gang scheduled with
	// Coscheduling; absent for pods.
	Cycle string `json:"cycle,omitempty"`
	// Groups are the PodGroups one copy is (pod-group cycle only).
	Groups []CapacityGroup `json:"groups,omitempty"`
	// NextCopy is what kube's pod-group cycle did with the copy that
	// stopped the count: each group's bound members and message, the
	// topology domains it tried.
	NextCopy []CapacityGroupOutcome `json:"nextCopy,omitempty"`
}

// CapacityGroup is one PodGroup of a copy.
type CapacityGroup struct {
	// Name is the PodGroup's name in the spec (copies are "<name>-<n>").
	Name string `json:"name"`
	// Policy is "gang" or "basic"; MinCount the gang's quorum.
	Policy   string `json:"policy"`
	MinCount int32  `json:"minCount,omitempty"`
	// Members is how many pods the group has in one copy.
	Members int `json:"members"`
	// TopologyKey is the key of its topology constraint
	// (TopologyAwareWorkloadScheduling), if any.
	TopologyKey string `json:"topologyKey,omitempty"`
}

// CapacityGroupOutcome is one PodGroup of the copy that stopped a count,
// as the pod-group cycle left it.
type CapacityGroupOutcome struct {
	// PodGroup is the copy's PodGroup name ("<name>-<n>").
	PodGroup string `json:"podGroup"`
	// Bound counts the members kube binds (a gang that reached minCount
	// with members left over binds those: the copy still does not
	// count); Members the group's pods.
	Bound   int `json:"bound"`
	Members int `json:"members"`
	// Message is the PodGroupInitiallyScheduled condition's message, or
	// the first member's failure.
	Message string `json:"message,omitempty"`
	// Note says what kube does with a copy bound in part.
	Note string `json:"note,omitempty"`
	// Placements are the topology domains the last cycle tried, each
	// with its shortfall.
	Placements []PodGroupPlacement `json:"placements,omitempty"`
	// Shortfall, without a topology constraint, is what all the nodes
	// lack for the members left over (a lower bound).
	Shortfall []ResourceShortfall `json:"shortfall,omitempty"`
}

// NearNode is a node the next copy does not fit on, with its gaps.
type NearNode struct {
	Node string `json:"node"`
	// Reasons are the rejecting plugins' reasons ("Plugin: reason").
	Reasons []string `json:"reasons"`
	// Gaps say what would make the copy fit ("needs 250m cpu more (free
	// 750m of 4)").
	Gaps []string `json:"gaps"`
	// Details are the lines under each gap, by gap (details[i] under
	// gaps[i]): one per device, claim, PV or pod involved, as explain
	// prints them ("gpu.example.com/gpu-node/gpu-1: allocated to
	// ml/trainer-0"); absent when no gap has any.
	Details [][]string `json:"details,omitempty"`
}

// NodeMessage is a node with a message.
type NodeMessage struct {
	Node    string `json:"node"`
	Message string `json:"message"`
}

// Leftover is the nodes' free resources: cluster totals and per node.
type Leftover struct {
	// Allocatable and Free are totals over the nodes (cpu in millicores,
	// memory and storage in bytes, pods in pods, other resources in
	// their units).
	Allocatable map[string]int64 `json:"allocatable"`
	Free        map[string]int64 `json:"free"`
	// Nodes is each node's free resources, by name.
	Nodes map[string]map[string]int64 `json:"nodes"`
	// Note says which copies are not counted in (those of a spec whose
	// landing was not worked out, NodesNote).
	Note string `json:"note,omitempty"`
}

// Monotonicity of a --min-nodes search (MinNodes.Monotonicity).
const (
	// MonotoneProven: every spec is node-local, so a node added never
	// takes a copy away from the others.
	MonotoneProven = "proven"
	// MonotoneAssumed: the search assumed that more template nodes never
	// fit fewer copies (spreading can break it); the evaluations made
	// did not contradict it.
	MonotoneAssumed = "assumed"
	// MonotoneViolated: two evaluations contradicted it; NodesNeeded is
	// the smallest count seen to suffice.
	MonotoneViolated = "violated"
)

// MinNodes is the --min-nodes search: the fewest template nodes with
// which every spec gets its --replicas.
type MinNodes struct {
	// NodesNeeded is the answer; Reachable is false when no number of
	// template nodes was found to suffice (then NodesNeeded is the last
	// count tried).
	NodesNeeded int  `json:"nodesNeeded"`
	Reachable   bool `json:"reachable"`
	// Method is "node-local" (per-node counts give the answer directly)
	// or "search" (galloping, then binary search).
	Method       string `json:"method"`
	Monotonicity string `json:"monotonicity"`
	// Evaluations are the node counts tried, in order.
	Evaluations []Evaluation `json:"evaluations"`
	// Unreachable is true when no number of template nodes can suffice,
	// with a proof (Message gives it); Reachable and Unreachable both
	// false mean the search gave up (Message says what it tried).
	Unreachable bool `json:"unreachable,omitempty"`
	// Message says why the target is unreachable, or what was tried when
	// no count was found to suffice.
	Message string `json:"message,omitempty"`
}

// Evaluation is one node count tried by the search.
type Evaluation struct {
	Nodes int `json:"nodes"`
	// Counts are the specs' counts with that many template nodes.
	Counts []int `json:"counts"`
	// Enough is true when every spec got its --replicas.
	Enough bool `json:"enough"`
}
