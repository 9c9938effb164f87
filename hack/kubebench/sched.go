package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// Constants of kube-scheduler's schedule_one.go.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// bench is one kube-scheduler, built the way kube-scheduler builds itself
// (scheduler.New: the in-tree registry, profile.NewMap →
// frameworkruntime.NewFramework per profile, its cache, DRA and CSI
// managers, informers on a clientset), but driven one pod at a time by
// run instead of by its queue.
type bench struct {
	sched      *scheduler.Scheduler
	snapshot   *internalcache.Snapshot
	percentage int32
	nextStart  int
	// explainRun, when set, explains each pod (explain.go) before its
	// cycle of run, against the state the earlier placements left.
	explainRun bool
	explained  []explainCase
	// draPods: some pending pod has ResourceClaims or the snapshot has
	// DeviceClasses (DRA-backed extended resources); placements then
	// commit claims through PreBind (dra.go).
	draPods bool
	factory informers.SharedInformerFactory
}

func newBench(ctx context.Context, client clientset.Interface, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32) (*bench, informers.SharedInformerFactory, error) {
	factory := scheduler.NewInformerFactory(client, 0, nil)
	snapshot := internalcache.NewEmptySnapshot()
	recorders := profile.RecorderFactory(func(string) events.EventRecorderLogger { return &events.FakeRecorder{} })
	sched, err := scheduler.New(ctx, client, factory, nil, recorders,
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPercentageOfNodesToScore(&percentage),
		scheduler.WithNodeInfoSnapshot(snapshot),
	)
	if err != nil {
		return nil, nil, err
	}
	return &bench{sched: sched, snapshot: snapshot, percentage: percentage, factory: factory}, factory, nil
}

// waitCache waits until the scheduler's cache holds the cluster's nodes and
// bound pods.
func (b *bench) waitCache(cl *cluster) error {
	for b.sched.Cache.NodeCount() < cl.nodes {
		time.Sleep(10 * time.Millisecond)
	}
	for {
		n, err := b.sched.Cache.PodCount()
		if err != nil {
			return err
		}
		if n >= cl.bound {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ctxLogger(ctx context.Context) klog.Logger { return klog.FromContext(ctx) }

// queueOrder sorts pods as PrioritySort does for pods queued in
// creationTimestamp order: priority descending, then creation time, then
// namespace/name.
func queueOrder(pods []*v1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		pi, pj := corev1helpers.PodPriority(pods[i]), corev1helpers.PodPriority(pods[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := pods[i].CreationTimestamp.Time, pods[j].CreationTimestamp.Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return pods[i].Namespace+"/"+pods[i].Name < pods[j].Namespace+"/"+pods[j].Name
	})
}

type placement struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

type failure struct {
	Pod     string `json:"pod"`
	Message string `json:"message"`
	After   int    `json:"after"`
}

type result struct {
	Placements    []placement `json:"placements"`
	Unschedulable []failure   `json:"unschedulable"`
	skipped       int         // pods of no profile of ours
}

// run places the pods one at a time, each committed (assumed into the
// cache, Reserve run) before the next; no preemption.
func (b *bench) run(ctx context.Context, pods []*v1.Pod) (*result, error) {
	logger := klog.FromContext(ctx)
	res := &result{Placements: []placement{}, Unschedulable: []failure{}}
	for _, pod := range pods {
		f, ok := b.sched.Profiles[pod.Spec.SchedulerName]
		if !ok {
			res.skipped++
			continue
		}
		if err := b.sched.Cache.UpdateSnapshot(logger, b.snapshot); err != nil {
			return nil, err
		}
		if b.explainRun {
			c, err := b.explain(ctx, f, pod)
			if err != nil {
				return nil, fmt.Errorf("pod %s/%s: explain: %w", pod.Namespace, pod.Name, err)
			}
			c.AfterPlacements = len(res.Placements)
			b.explained = append(b.explained, *c)
		}
		key := pod.Namespace + "/" + pod.Name
		// A pod a PreEnqueue plugin holds (a scheduling gate, a
		// ResourceClaim not created yet) gets no cycle in kube: it is
		// recorded with the plugin's message at its turn.
		if st := runPreEnqueuePlugins(ctx, f, pod); !st.IsSuccess() {
			res.Unschedulable = append(res.Unschedulable, failure{Pod: key, Message: st.Message(), After: len(res.Placements)})
			continue
		}
		node, fitErr, err := b.commit(ctx, f, pod)
		if err != nil {
			return nil, err
		}
		if fitErr != nil {
			res.Unschedulable = append(res.Unschedulable, failure{Pod: key, Message: fitErr.Error(), After: len(res.Placements)})
			continue
		}
		res.Placements = append(res.Placements, placement{Pod: key, Node: node})
	}
	return res, nil
}

// commit runs one scheduling cycle of pod on the current snapshot and, when
// a node fits, assumes the pod there and runs the Reserve plugins, so that
// the next cycle sees it.
func (b *bench) commit(ctx context.Context, f framework.Framework, pod *v1.Pod) (string, *framework.FitError, error) {
	logger := klog.FromContext(ctx)
	key := pod.Namespace + "/" + pod.Name
	state := framework.NewCycleState()
	node, fitErr, err := b.schedulePod(ctx, f, state, pod)
	if err != nil || fitErr != nil {
		if err != nil {
			err = fmt.Errorf("pod %s: %w", key, err)
		}
		return "", fitErr, err
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	if err := b.sched.Cache.AssumePod(logger, assumed); err != nil {
		return "", nil, fmt.Errorf("pod %s: assume: %w", key, err)
	}
	if st := f.RunReservePluginsReserve(ctx, state, assumed, node); !st.IsSuccess() {
		return "", nil, fmt.Errorf("pod %s: reserve on %s: %w", key, node, st.AsError())
	}
	if err := b.commitClaims(ctx, f, state, assumed, node); err != nil {
		return "", nil, fmt.Errorf("pod %s: %w", key, err)
	}
	return node, nil, nil
}

// schedulePod is kube's schedulePod and findNodesThatFitPod (v1.37.2,
// schedule_one.go) without nominated nodes, extenders and the batching
// hint, and with ties between the best totals going to the lowest node
// name instead of a random one.
func (b *bench) schedulePod(ctx context.Context, f framework.Framework, state fwk.CycleState, pod *v1.Pod) (string, *framework.FitError, error) {
	allNodes, err := b.snapshot.ListNodesInPlacement()
	if err != nil {
		return "", nil, err
	}
	if len(allNodes) == 0 {
		return "", nil, errors.New("no nodes available to schedule pods")
	}
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	fitError := func() *framework.FitError {
		return &framework.FitError{Pod: pod, NumAllNodes: b.snapshot.NumNodesInPlacement(), Diagnosis: diagnosis}
	}
	preRes, s, unschedulable := f.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unschedulable
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return "", nil, s.AsError()
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		return "", fitError(), nil
	}
	// The nominated node (set by preemption) is tried first, as kube's
	// evaluateNominatedNode; a failure there is recorded and the full pass
	// follows.
	if nnn := pod.Status.NominatedNodeName; nnn != "" {
		if ni, err := b.snapshot.GetNodeInPlacement(nnn); err == nil {
			if feasible, err := b.passFilters(ctx, f, state, pod, &diagnosis, []fwk.NodeInfo{ni}); err == nil && len(feasible) == 1 {
				return feasible[0].Node().Name, nil, nil
			}
		}
	}
	nodes := allNodes
	if !preRes.AllNodes() {
		nodes = make([]fwk.NodeInfo, 0, len(preRes.NodeNames))
		for name := range preRes.NodeNames {
			if ni, err := b.snapshot.GetNodeInPlacement(name); err == nil {
				nodes = append(nodes, ni)
			}
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulable))))
	}
	feasible, err := b.passFilters(ctx, f, state, pod, &diagnosis, nodes)
	b.nextStart = (b.nextStart + len(feasible) + diagnosis.NodeToStatus.Len()) % len(allNodes)
	if err != nil {
		return "", nil, err
	}
	switch len(feasible) {
	case 0:
		return "", fitError(), nil
	case 1:
		return feasible[0].Node().Name, nil, nil
	}
	if !f.HasScorePlugins() {
		return lowestName(feasible), nil, nil
	}
	if st := f.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return "", nil, st.AsError()
	}
	scores, st := f.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return "", nil, st.AsError()
	}
	best := scores[0]
	for _, sc := range scores[1:] {
		if sc.TotalScore > best.TotalScore || (sc.TotalScore == best.TotalScore && sc.Name < best.Name) {
			best = sc
		}
	}
	return best.Name, nil, nil
}

// passFilters is kube's findNodesThatPassFilters: filters in parallel,
// starting where the previous cycle stopped, until enough feasible nodes
// are found (all of them at percentageOfNodesToScore 100).
func (b *bench) passFilters(ctx context.Context, f framework.Framework, state fwk.CycleState, pod *v1.Pod, diagnosis *framework.Diagnosis, nodes []fwk.NodeInfo) ([]fwk.NodeInfo, error) {
	n := len(nodes)
	toFind := b.numFeasibleNodesToFind(f.PercentageOfNodesToScore(), int32(n))
	if !f.HasScorePlugins() {
		toFind = 1
	}
	feasible := make([]fwk.NodeInfo, toFind)
	if !f.HasFilterPlugins() {
		for i := range feasible {
			feasible[i] = nodes[(b.nextStart+i)%n]
		}
		return feasible, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var found int32
	var firstErr atomic.Pointer[error]
	statuses := make([]*fwk.Status, n)
	names := make([]string, n)
	f.Parallelizer().Until(ctx, n, func(i int) {
		ni := nodes[(b.nextStart+i)%n]
		st := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		switch {
		case st.Code() == fwk.Error:
			err := st.AsError()
			firstErr.CompareAndSwap(nil, &err)
			cancel()
		case st.IsSuccess():
			if k := atomic.AddInt32(&found, 1); k > toFind {
				cancel()
				atomic.AddInt32(&found, -1)
			} else {
				feasible[k-1] = ni
			}
		default:
			statuses[i], names[i] = st, ni.Node().Name
		}
	}, "Filter")
	feasible = feasible[:found]
	for i, st := range statuses {
		if st != nil {
			diagnosis.NodeToStatus.Set(names[i], st)
			diagnosis.AddPluginStatus(st)
		}
	}
	if e := firstErr.Load(); e != nil {
		return nil, *e
	}
	return feasible, nil
}

func (b *bench) numFeasibleNodesToFind(profilePct *int32, numAllNodes int32) int32 {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	pct := b.percentage
	if profilePct != nil {
		pct = *profilePct
	}
	if pct == 0 {
		pct = max(int32(50)-numAllNodes/125, minFeasibleNodesPercentageToFind)
	}
	if n := numAllNodes * pct / 100; n >= minFeasibleNodesToFind {
		return n
	}
	return minFeasibleNodesToFind
}

func lowestName(nodes []fwk.NodeInfo) string {
	best := nodes[0].Node().Name
	for _, n := range nodes[1:] {
		if n.Node().Name < best {
			best = n.Node().Name
		}
	}
	return best
}
