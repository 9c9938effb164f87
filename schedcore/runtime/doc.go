// Package runtime runs schedcore's plugins, as kube-scheduler's
// framework/runtime runs the framework's: Framework (one profile's plugins
// per extension point, built from a KubeSchedulerProfile, and the runner of
// each point, with its filter and score passes over the snapshot's list),
// Algorithm (filter, score and select a host for one pod), Scheduler (the
// scheduling loop, the binding cycle, the pods waiting at Permit) and
// Explain (a cycle recorded node by node for explain).
//
// What the runner keeps for one cycle (the filter set computed after
// PreFilter, the filter loop's list positions, the score buffers it holds,
// the caller's CycleOptions) is its private cycleRun, carried by the
// cycle's schedcore.CycleState as an opaque schedcore.RunnerState: no
// runner flag or cache is a field of CycleState.
package runtime
