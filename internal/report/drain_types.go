package report

// Drain is `kubectl sched drain`'s machine-readable result (schema:
// docs/drain.md), versioned by APIVersion (CapacityAPIVersion).
type Drain struct {
	APIVersion string `json:"apiVersion"`
	// Kind is "Drain".
	Kind string `json:"kind"`
	// Source is "snapshot" or "cluster".
	Source string `json:"source"`
	// Action is "cordon" or "delete" (--delete).
	Action string `json:"action"`
	// Nodes are the drained nodes, in the order kubectl drain takes them.
	Nodes []DrainNode `json:"nodes"`
	// Moves are the evicted pods their controllers recreate, in the order
	// the scheduler placed them, then those left pending (To "").
	Moves []Move `json:"moves"`
	// Refused are the evictions the API server would refuse right now
	// (PodDisruptionBudgets), and the pods of nodes kubectl drain refuses
	// to drain: they stay where they are.
	Refused []Refused `json:"refused"`
	// Lost are evicted pods nothing recreates (no controller; --force).
	Lost []PodNote `json:"lost"`
	// Stay are the pods a drain leaves on the node: DaemonSet and mirror
	// pods (gone with the node under --delete).
	Stay []PodNote `json:"stay"`
	// Preempted are pods elsewhere that a re-placed pod preempts.
	Preempted []Eviction `json:"preempted"`
	// Gangs are the Workload API PodGroups (GenericWorkload on) that lose
	// members to the drain, in namespace/name order: their recreated
	// members go through kube's pod-group cycle together, so a gang whose
	// evicted members cannot all be re-placed gets none of them back
	// (Broken).
	Gangs []DrainGang `json:"gangs,omitempty"`
	// Utilisation is each node's requested resources before the drain and
	// after the re-placement.
	Utilisation []NodeUsage  `json:"utilisation"`
	Summary     DrainSummary `json:"summary"`
	// Complete is true when every pod that has to leave is evicted,
	// recreated and placed, and nothing else is preempted (exit status 0;
	// otherwise 3).
	Complete bool `json:"complete"`
}

// DrainNode is one drained node.
type DrainNode struct {
	Node string `json:"node"`
	// Drained is false when kubectl drain refuses the node (Refusal says
	// why): its pods stay.
	Drained bool   `json:"drained"`
	Refusal string `json:"refusal,omitempty"`
	// Pods counts the node's pods before the drain.
	Pods int `json:"pods"`
}

// Move is an evicted pod and where its replacement goes.
type Move struct {
	// Pod is "namespace/name" of the evicted pod (its replacement keeps the
	// name in this simulation).
	Pod string `json:"pod"`
	// From is the drained node; To the node the replacement is placed on,
	// "" when it stays pending.
	From string `json:"from"`
	To   string `json:"to"`
	// Reason is "Scheduled", or kube-scheduler's FitError message for a
	// pod left pending.
	Reason string `json:"reason"`
	// Controller is the pod's controller, "Kind/name".
	Controller string `json:"controller"`
	// LocalStorage flags a pod with emptyDir volumes: their data is lost.
	LocalStorage bool `json:"localStorage,omitempty"`
	// Nominated is set when the pod got its node by preempting others.
	Nominated string `json:"nominated,omitempty"`
}

// Refused is a pod a drain cannot evict now.
type Refused struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
	// Code is the HTTP status the eviction would get (429, 403, 500), 0
	// for a node kubectl drain refuses.
	Code int `json:"code"`
	// Message and Cause are the API server's (or kubectl drain's) words.
	Message string `json:"message"`
	Cause   string `json:"cause,omitempty"`
	// Budget is the PodDisruptionBudget that blocks it, "namespace/name".
	Budget string `json:"budget,omitempty"`
}

// PodNote is a pod with what happens to it.
type PodNote struct {
	Pod    string `json:"pod"`
	Node   string `json:"node"`
	Reason string `json:"reason"`
	// LocalStorage flags emptyDir data lost with the pod.
	LocalStorage bool `json:"localStorage,omitempty"`
}

// DrainSummary counts the outcome.
type DrainSummary struct {
	Evicted   int `json:"evicted"`
	Placed    int `json:"placed"`
	Pending   int `json:"pending"`
	Lost      int `json:"lost"`
	Refused   int `json:"refused"`
	Stay      int `json:"stay"`
	Preempted int `json:"preempted"`
	// BrokenGangs counts the Gangs that are Broken.
	BrokenGangs int `json:"brokenGangs,omitempty"`
}

// DrainGang is a PodGroup some of whose members a drain evicts.
type DrainGang struct {
	// PodGroup is "namespace/name"; Policy "gang" or "basic" ("" when the
	// PodGroup is not in the cluster); MinCount the gang's.
	PodGroup string `json:"podGroup"`
	Policy   string `json:"policy,omitempty"`
	MinCount int32  `json:"minCount,omitempty"`
	// Members counts the group's pods before the drain, Evicted those the
	// drain evicts; of these, Placed are re-placed, Pending left pending
	// and Lost not recreated.
	Members int `json:"members"`
	Evicted int `json:"evicted"`
	Placed  int `json:"placed"`
	Pending int `json:"pending"`
	Lost    int `json:"lost"`
	// Broken is set when an evicted member is not back on a node.
	Broken bool `json:"broken"`
	// Message says why, for a broken gang: the PodGroup's
	// PodGroupInitiallyScheduled condition when a cycle set it False,
	// else the first pending member's message (kube's words), or that
	// members are lost.
	Message string `json:"message,omitempty"`
}
