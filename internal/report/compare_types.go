package report

// Compare is what `kubectl sched compare` prints. Its JSON form is documented in
// docs/compare.md; fields are only ever added.
type Compare struct {
	Runs []CompareRun `json:"runs"`
	Diff CompareDiff  `json:"diff"`
}

// CompareRun is one configuration's outcome. Result is the document `dryrun -o
// json` (or `replay -o json`) prints for that configuration.
type CompareRun struct {
	Name   string `json:"name"`
	Config string `json:"config"`
	Result any    `json:"result"`
	// Stats are what the table shows.
	Stats CompareStats `json:"stats"`
	// Placements maps each placed pod to its node, and Pods lists every
	// pod the run scheduled, in the order the diff lists them; neither is
	// in the JSON.
	Placements map[string]string `json:"-"`
	Pods       []string          `json:"-"`
}

// CompareStats sum up a run for the side-by-side table.
type CompareStats struct {
	Placed        int                    `json:"placed"`
	Unschedulable int                    `json:"unschedulable"`
	Resources     []CompareResourceStats `json:"resources"`
	NodesUsed     int                    `json:"nodesUsed"`
	// Waits are for replays only (seconds of virtual time).
	WaitP50Seconds *float64 `json:"waitP50Seconds,omitempty"`
	WaitP99Seconds *float64 `json:"waitP99Seconds,omitempty"`
	// PodGroups count the Workload API PodGroups (GenericWorkload on),
	// absent when the run has none.
	PodGroups *CompareGroupStats `json:"podGroups,omitempty"`
}

// CompareGroupStats count a run's PodGroups: those whose
// PodGroupInitiallyScheduled condition is True at the end, and those with
// a member left pending.
type CompareGroupStats struct {
	Groups    int `json:"groups"`
	Scheduled int `json:"scheduled"`
	Pending   int `json:"pending"`
}

// CompareResourceStats are one resource's figures, as ratios of capacity: for a
// dry-run at the end, for a replay as means over virtual time (imbalance
// at the end).
type CompareResourceStats struct {
	Name string `json:"name"`
	// Utilisation is requested / allocatable over all nodes.
	Utilisation float64 `json:"utilisation"`
	// Imbalance is the standard deviation of the nodes' utilisation.
	Imbalance float64 `json:"imbalance"`
	// Fragmentation is the free capacity the workload's typical pod
	// shapes cannot use (docs/replay.md).
	Fragmentation float64 `json:"fragmentation"`
}

// CompareDiff is how each run's placements differ from the first run's (the
// baseline).
type CompareDiff struct {
	Baseline string           `json:"baseline"`
	Runs     []CompareRunDiff `json:"runs"`
}

// CompareRunDiff compares one run with the baseline.
type CompareRunDiff struct {
	Run string `json:"run"`
	// Moved are pods placed by both on different nodes.
	Moved []CompareMove `json:"moved"`
	// BecameSchedulable are pods the baseline left unplaced and this run
	// placed; BecameUnschedulable the reverse.
	BecameSchedulable   []CompareMove `json:"becameSchedulable"`
	BecameUnschedulable []CompareMove `json:"becameUnschedulable"`
}

// CompareMove is a pod's node in the baseline (From) and in the run (To); "" is
// not placed.
type CompareMove struct {
	Pod  string `json:"pod"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}
