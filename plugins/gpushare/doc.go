// Package gpushare holds the GPU-sharing model of the FGD paper ("Beware of
// Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
// Gradient Descent", Weng et al., USENIX ATC'23) and the six scoring
// policies it compares, as plugins. None is in the default profile; a
// KubeSchedulerConfiguration enables them (docs/fgd.md has the paper's
// profiles, docs/plugins.md walks through the plugins' state).
//
// The formulas, tie-breaks and normalizations are those of the paper's
// artifact (hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin
// and pkg/utils/frag.go), including its integer truncations; the plugin
// names are its names.
//
// # The request
//
// A pod carries its request in annotations (request.go):
// gpushare.kubectl-sched.io/gpu-count (GPUs), gpu-milli (thousandths of each
// GPU, 1..1000; a pod with more than one GPU takes whole GPUs) and gpu-model
// ("T4|P100": the models it accepts). A node's GPU count is its
// allocatable nvidia.com/gpu (args.gpuResource) and its model the label
// gpu.model (args.modelLabel). Pods do not request nvidia.com/gpu: the
// thousandths are GpuShare's to account.
//
// # GpuShare
//
// Extension points: PreFilter, Filter (with ExplainFilter),
// Reserve/Unreserve, EnqueueExtensions.
//
//   - PreFilter parses the request (an invalid one is
//     UnschedulableAndUnresolvable: "invalid GPU-share request: ...") and
//     brings each node's GPU state (NodeGPUs: free thousandths per device)
//     up to date, recomputing only nodes whose generation changed; a pod
//     without GPUs returns Skip (its Filter is skipped; the scores still
//     read the state).
//   - Filter, in the artifact's order: ErrReasonNoGPU and
//     ErrReasonGPUModel (UnschedulableAndUnresolvable), then
//     ErrReasonInsufficientGPU (Unschedulable) when no GPU holds the share,
//     or fewer than count GPUs are fully free.
//   - ExplainFilter says what a rejected node lacks, from the state Filter
//     read: "needs a GPU with 600m free; the freest has 540m (GPU 0)",
//     "needs 3 fully free GPUs; the node has 2 of 4", with each GPU's free
//     thousandths; no GPUs or another model have shortfall 1.
//   - Reserve picks the GPU(s) with args.gpuSelection: best (the tightest
//     GPU for a share, the first fully free GPUs for whole ones; default),
//     worst, random (the handle's seeded source) or the name of an enabled
//     score plugin that selects GPUs (FGDScore, DotProductScore with
//     dimExtMethod share). The choice is remembered by pod UID until
//     Unreserve or the pod leaves the node; Assignment reads it. A pod
//     placed by someone else uses its gpu-index annotation, else the best
//     fit in the node's pod order. The choice is not written to the pod
//     (the engine has no hook for a plugin to patch the pod it binds yet):
//     `kubectl sched run` restarted re-derives its own pods' GPUs by best
//     fit, and a device plugin cannot learn them from the pod.
//   - Queueing hints: a GPU pod deleted; a node added or its allocatable or
//     labels changed, with enough GPUs of an accepted model.
//
// Args (GpuShareArgs): gpuResource, modelLabel, gpuSelection.
//
// # The policies
//
// Each reads GpuShare's cycle state (so GpuShare must be enabled) and the
// node's free CPU (allocatable minus requests); the pod's CPU is its
// non-zero request. 128 cores and 8000 thousandths (the largest node of the
// paper's cluster) normalize DotProduct and BestFit.
//
//   - RandomScore (PreScore, Score): 100 for one feasible node picked with
//     the handle's source, 0 for the others.
//   - DotProductScore (Score; args dimExtMethod merge|share, normMethod
//     max): int(100*(1 - n·p/2)) over [cpu/128000, gpu/8000].
//   - GpuClusteringScore (Score): groups pods of one kind (shares, k whole
//     GPUs), 25*(8000-free)/8000 plus 75, 50, 25 or 0.
//   - GpuPackingScore (Score): used GPUs first, then used nodes, then
//     unused nodes.
//   - BestFitScore (Score, NormalizeScore): the leftover after placing the
//     pod, reversed, then min-max rescaled to [0, 100].
//   - FGDScore (PreScore, Score; args typicalPods, popularityThreshold):
//     int(100*sigmoid((frag before - frag after)/1000)) where frag is the
//     GPU capacity the typical pods could not use (FragModel), the best GPU
//     for a share.
//
// Each scorer's doc comment has its exact formula; the tests compute every
// one by hand.
package gpushare
