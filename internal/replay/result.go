package replay

import (
	"time"
)

// Event types of the log: the documented contract of `replay -o json`.
const (
	// EventPlaced: the pod was bound to Node.
	EventPlaced = "placed"
	// EventUnschedulable: one failed scheduling attempt, with kube's
	// message; a pod that fails several times has one event per attempt.
	EventUnschedulable = "unschedulable"
	// EventDeparted: a running pod left (its deletionTimestamp, or its node
	// left).
	EventDeparted = "departed"
	// EventDeleted: a pod deleted while still pending.
	EventDeleted = "deleted"
	// EventPreempted: a running pod evicted by preemption for Preemptor.
	EventPreempted = "preempted"
)

// Result is the record of a replay. Its JSON form is the contract
// documented in docs/replay.md; fields are only ever added.
type Result struct {
	// Events are what happened to the pods, in the order it happened.
	Events []Event `json:"events"`
	// NodeEvents are the nodes that arrived or left after the start.
	NodeEvents []NodeEvent `json:"nodeEvents"`
	// Series are the time series, one sample per instant of the virtual
	// clock at which something happened, taken once everything that
	// happened at it is done.
	Series Series `json:"series"`
	// Summary totals the run.
	Summary Summary `json:"summary"`
	// Busiest are the nodes with the highest mean allocation over the run
	// (of their most allocated resource), at most 20, busiest first.
	Busiest []NodeStat `json:"busiest"`
	// Pending are the pods still pending at the end, with their last
	// failure, in trace order.
	Pending []PendingPod `json:"pending"`
	// PodGroups are the Workload API PodGroups at the end (GenericWorkload
	// on; their pending members were scheduled by kube's pod-group cycle),
	// in trace order.
	PodGroups []GroupResult `json:"podGroups,omitempty"`
	// Placements are the final node of every pod placed during the run, by
	// pod; not in the JSON (compare reads it).
	Placements map[string]string `json:"-"`
}

// Event is one entry of the log.
type Event struct {
	Time time.Time `json:"time"`
	// Pod is "namespace/name".
	Pod  string `json:"pod"`
	Type string `json:"type"`
	// Node is where the pod was placed, ran (departed, preempted) or, for
	// an unschedulable attempt, is empty.
	Node string `json:"node,omitempty"`
	// Message is kube's FitError message for unschedulable, why a pod
	// departed when its node left, and the reason of a deletion.
	Message string `json:"message,omitempty"`
	// Plugins are the plugins that rejected the pod (unschedulable).
	Plugins []string `json:"plugins,omitempty"`
	// Preemptor is the pod a preempted pod made room for.
	Preemptor string `json:"preemptor,omitempty"`
	// WaitSeconds is, for placed, the virtual time from arrival to
	// placement.
	WaitSeconds *float64 `json:"waitSeconds,omitempty"`
	// Attempt numbers the pod's scheduling attempts (placed, unschedulable).
	Attempt int `json:"attempt,omitempty"`
}

// NodeEvent is a node arriving ("added") or leaving ("removed").
type NodeEvent struct {
	Time time.Time `json:"time"`
	Node string    `json:"node"`
	Type string    `json:"type"`
}

// Node event types.
const (
	NodeAdded   = "added"
	NodeRemoved = "removed"
)

// Series are columns with one value per sample.
type Series struct {
	// Time is the sample's virtual time in seconds since the start.
	Time []float64 `json:"time"`
	// Arrived counts the pods arrived so far.
	Arrived []int `json:"arrived"`
	// Pending counts pods arrived, not placed, not deleted.
	Pending []int `json:"pending"`
	// Running counts pods bound and not gone.
	Running []int `json:"running"`
	// Attempts and FailedAttempts count scheduling attempts so far.
	Attempts       []int `json:"attempts"`
	FailedAttempts []int `json:"failedAttempts"`
	// WaitP50 and WaitP99 are quantiles, in seconds of virtual time, of the
	// waits from arrival to placement of the pods placed in the window of
	// WaitWindowSeconds that ends at the sample; NaN-free: 0 when none.
	WaitP50           []float64 `json:"waitP50"`
	WaitP99           []float64 `json:"waitP99"`
	WaitWindowSeconds float64   `json:"waitWindowSeconds"`
	// Resources are cpu, memory, then each extended resource and each
	// DRA driver's devices ("<driver>/devices", see DeviceColumn) by name.
	Resources []ResourceSeries `json:"resources"`
	// PendingReasons count, per plugin, the pending pods that plugin
	// rejected in their last attempt.
	PendingReasons []ReasonSeries `json:"pendingReasons"`
	// Extra are the columns of Options.Probes.
	Extra []ExtraSeries `json:"extra,omitempty"`
}

// ResourceSeries are one resource's columns, in its units (milli-CPU,
// bytes, counts).
type ResourceSeries struct {
	Name string `json:"name"`
	// Capacity is the allocatable of the nodes present.
	Capacity []int64 `json:"capacity"`
	// Allocated is the requests of the running pods.
	Allocated []int64 `json:"allocated"`
	// ArrivedDemand is the requests of every pod arrived so far, placed
	// or not (the FGD paper's "arrived workload").
	ArrivedDemand []int64 `json:"arrivedDemand"`
	// Fragmentation is the free capacity the workload's typical pod
	// shapes cannot use (see docs/replay.md).
	Fragmentation []float64 `json:"fragmentation"`
}

// ReasonSeries counts pending pods rejected by one plugin.
type ReasonSeries struct {
	Plugin string `json:"plugin"`
	Pods   []int  `json:"pods"`
}

// ExtraSeries is a probe's column.
type ExtraSeries struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// Summary totals a replay. The pod counts add up: Pods = Running +
// Departed + Deleted + Preempted + Pending + NotArrived.
type Summary struct {
	// Pods and Nodes count the trace's.
	Pods  int `json:"pods"`
	Nodes int `json:"nodes"`
	// Start and End are the virtual times replayed.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Placed counts placements (a pod is placed at most once).
	Placed     int `json:"placed"`
	Running    int `json:"running"`
	Departed   int `json:"departed"`
	Deleted    int `json:"deleted"`
	Preempted  int `json:"preempted"`
	Pending    int `json:"pending"`
	NotArrived int `json:"notArrived"`
	// Attempts counts scheduling attempts, FailedAttempts those that failed.
	Attempts       int `json:"attempts"`
	FailedAttempts int `json:"failedAttempts"`
	// Wait quantiles over every placed pod, in seconds of virtual time.
	WaitP50Seconds float64 `json:"waitP50Seconds"`
	WaitP99Seconds float64 `json:"waitP99Seconds"`
	WaitMaxSeconds float64 `json:"waitMaxSeconds"`
	// Resources sum up each resource's series.
	Resources []ResourceSummary `json:"resources"`
	// NodesUsed counts nodes that ran a pod placed during the replay.
	NodesUsed int `json:"nodesUsed"`
	// Instants counts the samples: virtual instants with something to do.
	Instants int `json:"instants"`
	// PodGroups counts the Workload API PodGroups at the end
	// (GenericWorkload on); PodGroupsScheduled those whose
	// PodGroupInitiallyScheduled condition is True, PodGroupsPending those
	// with a member pending.
	PodGroups          int      `json:"podGroups,omitempty"`
	PodGroupsScheduled int      `json:"podGroupsScheduled,omitempty"`
	PodGroupsPending   int      `json:"podGroupsPending,omitempty"`
	DurationSeconds    float64  `json:"durationSeconds"`
	Profiles           []string `json:"profiles"`
}

// ResourceSummary sums up one resource: ratios of capacity, in [0, 1].
type ResourceSummary struct {
	Name string `json:"name"`
	// Capacity at the end, in the resource's units.
	Capacity int64 `json:"capacity"`
	// MeanAllocation is weighted by virtual time (the last sample when the
	// replay spans no time); Peak and Final are the highest and last.
	MeanAllocation  float64 `json:"meanAllocation"`
	PeakAllocation  float64 `json:"peakAllocation"`
	FinalAllocation float64 `json:"finalAllocation"`
	// MeanFragmentation is weighted like MeanAllocation.
	MeanFragmentation float64 `json:"meanFragmentation"`
	// Imbalance is the standard deviation of the nodes' allocation at the
	// end, over the nodes that have the resource.
	Imbalance float64 `json:"imbalance"`
}

// NodeStat is one node's share of the run.
type NodeStat struct {
	Node string `json:"node"`
	// Placed counts pods placed on it during the run.
	Placed int `json:"placed"`
	// MeanAllocation is its time-weighted allocation per resource.
	MeanAllocation map[string]float64 `json:"meanAllocation"`
}

// PendingPod is a pod still pending at the end.
type PendingPod struct {
	Pod      string    `json:"pod"`
	Since    time.Time `json:"since"`
	Attempts int       `json:"attempts"`
	Message  string    `json:"message,omitempty"`
	Plugins  []string  `json:"plugins,omitempty"`
}

// Resource returns the named resource's series, or nil.
func (s *Series) Resource(name string) *ResourceSeries {
	for i := range s.Resources {
		if s.Resources[i].Name == name {
			return &s.Resources[i]
		}
	}
	return nil
}

// AllocationAtDemand returns the allocation ratio (allocated / capacity)
// at the first sample whose arrived demand reaches ratio of capacity (the
// FGD paper's "GPU allocation at 100% arrived"); ok is false if the demand
// never gets there.
func (r *ResourceSeries) AllocationAtDemand(ratio float64) (alloc float64, ok bool) {
	for i := range r.ArrivedDemand {
		c := r.Capacity[i]
		if c > 0 && float64(r.ArrivedDemand[i]) >= ratio*float64(c) {
			return float64(r.Allocated[i]) / float64(c), true
		}
	}
	return 0, false
}
