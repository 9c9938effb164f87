// Package schedcore is the plugin API of kubectl-sched's scheduling engine,
// what a plugin author imports, as kube-scheduler v1.37's framework package:
// extension points, Status codes, cycle state, registry and profiles, node
// info, the cache and its incremental snapshot, the Handle (with the
// Framework and WaitingPod interfaces) and the per-cycle index types plugins
// read (label columns, DomainCounts, memos). The runtime that runs plugins
// (the framework's runner, the filter and score passes, the algorithm, the
// scheduling loop, the explanation recording) is schedcore/runtime, as
// kube's framework/runtime; schedcore imports none of it. The engine knows
// nothing of where cluster state comes from or where decisions go: drivers
// (dryrun, explain, run) plug in a Binder, an EventRecorder, a
// MetricsRecorder and Hooks.
//
// One pod's trip through the engine:
//
//	queue ──PreEnqueue──► activeQ (QueueSort) ──Pop──► scheduling cycle
//	  ▲                                                  │
//	  │ backoffQ / unschedulable ◄── failure ───────────┤ PreFilter ─► Filter (parallel over nodes)
//	  │ (queueing hints on events)                       │   └─ none fit ─► PostFilter (preemption)
//	  │                                                  │ PreScore ─► Score ─► NormalizeScore ─► weights
//	  │                                                  │ select host (best total; ties: rule of the driver)
//	  │                                                  │ assume in cache ─► Reserve ─► Permit (Allow/Wait/Reject)
//	  │                                                  ▼
//	  └──────────── Unreserve + forget ◄── failure ── binding cycle: WaitOnPermit ─► PreBind ─► Bind ─► PostBind
//
// A pod group's cycle (GenericWorkload; placement.go) tries its members
// with the same PreFilter..Reserve steps, one placement of nodes at a
// time, and adds its own points:
//
//	PlacementGenerate (placements; none: all nodes) ─► per placement, per member:
//	    pod's PreFilter..Reserve on the placement's nodes ─► PlacementFeasible (Wait/Unschedulable/Success)
//	─► PlacementScore ─► NormalizePlacementScore ─► weights (best placement)
//	failure ─► PodGroupPostFilter (group preemption)
//
// A member's CycleState carries the group's state and the placement's
// (PodGroupSchedulingCycle, PlacementCycleState).
//
// Status codes and what the queue does with them:
//
//	Success                       the extension point passed (a nil *Status is Success)
//	Error                         an internal error: the pod goes to backoff, the message is logged
//	Unschedulable                 rejected; preemption may help; requeued on the plugin's events
//	UnschedulableAndUnresolvable  rejected; preemption cannot help on that node
//	Wait                          Permit: the pod waits for Allow or Reject (with a timeout);
//	                              PlacementFeasible: the group may fit once more members are tried
//	Skip                          PreFilter/PreScore: skip this plugin's Filter/Score this cycle;
//	                              Bind: let the next binder try
//	Pending                       rejected while waiting on something outside the scheduler; the
//	                              pod skips backoff when its plugin's event arrives
//
// Hot path: plugins precompute per pod in PreFilter/PreScore and keep it in
// the CycleState; Filter and Score run in parallel over nodes and only read.
// Results never depend on the parallelism: nodes are filtered in windows
// whose results are collected in node order.
package schedcore
