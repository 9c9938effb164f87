package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// pluginMetricsSamplePercent is the share of cycles whose plugins are timed.
const pluginMetricsSamplePercent = 10

// Failure reasons of the PodScheduled condition.
const (
	ReasonUnschedulable  = v1.PodReasonUnschedulable
	ReasonSchedulerError = v1.PodReasonSchedulerError
)

// Hooks are what a driver plugs into the scheduler loop: where the current
// version of a pod comes from and where outcomes go. Nil hooks do nothing.
type Hooks struct {
	// CurrentPod returns the driver's latest copy of the pod, or nil if it is
	// gone (the informer cache for run, the in-memory store for dryrun).
	CurrentPod func(pod *v1.Pod) *v1.Pod
	// Scheduled is called after a pod is bound.
	Scheduled func(ctx context.Context, fw *Framework, qpi *schedcore.QueuedPodInfo, node string, result ScheduleResult)
	// Failed is called after a failed attempt: reason is
	// ReasonUnschedulable or ReasonSchedulerError, status carries the
	// message (a *FitError for unschedulable pods).
	Failed func(ctx context.Context, fw *Framework, qpi *schedcore.QueuedPodInfo, reason string, status *schedcore.Status, nominating *schedcore.NominatingInfo)
	// PodGroupStatus is called when a pod-group cycle changes a PodGroup's
	// status (its PodGroupInitiallyScheduled condition): kube patches the
	// PodGroup's status with it; the PodGroup given is the cycle's copy.
	PodGroupStatus func(ctx context.Context, pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus)
	// Placements, if set, is called after a pod-group cycle with
	// TopologyAwareWorkloadScheduling tried its placements, with each
	// one's outcome in the generator's order (explain podgroup).
	Placements func(g *schedcore.QueuedPodGroupInfo, outcomes []PlacementOutcome)
}

// PlacementOutcome is one placement a pod-group cycle tried.
type PlacementOutcome struct {
	// Name is the placement's name; Nodes counts its nodes.
	Name  string
	Nodes int
	// Feasible: the group reached its quorum in it. Message is the
	// group's status there otherwise (kube's words).
	Feasible bool
	Message  string
	// Scored is set when the placement was scored (kube scores only
	// when more than one placement is feasible); Score is its total.
	Scored bool
	Score  int64
	// Chosen is the placement the cycle took.
	Chosen bool
}

// Scheduler is the scheduling loop of kube-scheduler: pop a pod, run the
// scheduling cycle, assume it, then run the binding cycle (asynchronously
// unless SyncBinding). The same loop serves run and dryrun.
type Scheduler struct {
	Cache     *schedcore.Cache
	Queue     schedcore.SchedulingQueue
	Profiles  map[string]*Framework
	Algorithm *Algorithm
	Hooks     Hooks
	Recorder  MetricsRecorder
	Logger    logr.Logger
	Clock     clock.PassiveClock
	// SyncBinding runs the binding cycle in the scheduling goroutine (dryrun).
	SyncBinding bool
	// Rand samples cycles for plugin metrics.
	Rand *rand.Rand
	// KeepFailures keeps each single pod's failed cycle for TakeFailure
	// (repeat.go).
	KeepFailures bool

	snapshot *schedcore.Snapshot
	bindWG   sync.WaitGroup
	randMu   sync.Mutex
	// parked are the binding cycles of pods waiting at Permit when
	// SyncBinding is set, in the order they were parked.
	parked []parkedBinding
	// spareState is the state of the last cycle whose binding cycle ran
	// to its end in the scheduling goroutine (SyncBinding), emptied, for
	// the next cycle (see recycleState).
	spareState atomic.Pointer[schedcore.CycleState]
	// lastFailure is the last cycle's, with KeepFailures (TakeFailure).
	lastFailure *FailedAttempt
}

// parkedBinding is a binding cycle put off until its pod's Permit wait is
// decided (SyncBinding only: the one goroutine must not block on it).
type parkedBinding struct {
	state   *schedcore.CycleState
	fw      *Framework
	result  ScheduleResult
	assumed *schedcore.QueuedPodInfo
	start   time.Time
}

// NewScheduler wires a scheduler; every profile's handle must share
// snapshot. It points the profiles' handles at the queue (their nominator,
// unless they have their own, and their activator): call it before the
// first cycle and before the queue receives pods.
func NewScheduler(cache *schedcore.Cache, queue schedcore.SchedulingQueue, profiles map[string]*Framework, snapshot *schedcore.Snapshot, alg *Algorithm) *Scheduler {
	alg.Snapshot = snapshot
	for _, fw := range profiles {
		fw.handle.SetQueue(queue)
	}
	return &Scheduler{Cache: cache, Queue: queue, Profiles: profiles, Algorithm: alg, snapshot: snapshot, Logger: logr.Discard(), Clock: clock.RealClock{}, Rand: rand.New(rand.NewSource(1))}
}

// Snapshot returns the scheduler's snapshot.
func (s *Scheduler) Snapshot() *schedcore.Snapshot { return s.snapshot }

// WaitForBindings waits for in-flight binding cycles.
func (s *Scheduler) WaitForBindings() { s.bindWG.Wait() }

// Run schedules pods until ctx ends or the queue closes.
func (s *Scheduler) Run(ctx context.Context) {
	for ctx.Err() == nil {
		qpi, err := s.Queue.Pop(s.Logger)
		if err != nil || qpi == nil {
			return
		}
		s.ScheduleOnePod(ctx, qpi)
	}
	s.bindWG.Wait()
}

// ScheduleOnePod runs the whole workflow for one popped entity: a pod,
// or with GenericWorkload a pod group (its Group set), which goes through
// the pod-group cycle (kube's ScheduleOne).
func (s *Scheduler) ScheduleOnePod(ctx context.Context, qpi *schedcore.QueuedPodInfo) {
	s.lastFailure = nil
	if qpi.Group != nil {
		s.scheduleOnePodGroup(ctx, qpi)
		return
	}
	pod := qpi.Pod
	fw, ok := s.Profiles[pod.Spec.SchedulerName]
	if !ok {
		s.Queue.Done(pod.UID)
		return
	}
	if pod.DeletionTimestamp != nil || s.Cache.IsAssumedPod(pod) {
		s.Queue.Done(pod.UID)
		return
	}
	start := s.Clock.Now()
	state := s.spareState.Swap(nil)
	if state == nil {
		state = schedcore.NewCycleState()
	}
	s.randMu.Lock()
	// The draw is made with or without a recorder, so that the seeded
	// sequence (tie-breaks) is the same; without one, a sampled cycle
	// would time nothing and only lose the memos and uniform scores.
	state.RecordPluginMetrics = s.Rand.Intn(100) < pluginMetricsSamplePercent && recordsPluginMetrics(fw.recorder)
	s.randMu.Unlock()

	startIdx := 0
	if s.KeepFailures {
		startIdx = s.Algorithm.startIndex()
	}
	result, assumed, status := s.schedulingCycle(ctx, state, fw, qpi)
	if !status.IsSuccess() {
		if s.KeepFailures {
			s.keepFailure(fw, pod, status, result.NominatingInfo, startIdx)
		}
		s.handleFailure(ctx, fw, assumed, status, result.NominatingInfo, start)
		if s.SyncBinding {
			// A PostFilter may have rejected waiting pods.
			s.ResolveWaiting(ctx)
		}
		return
	}
	s.startBindingCycle(ctx, state, fw, result, assumed, start)
}

// startBindingCycle runs the binding cycle of an assumed pod: in a
// goroutine, or with SyncBinding at once, or parked while its Permit wait
// is undecided.
func (s *Scheduler) startBindingCycle(ctx context.Context, state *schedcore.CycleState, fw *Framework, result ScheduleResult, assumed *schedcore.QueuedPodInfo, start time.Time) {
	if s.SyncBinding {
		if w := fw.GetWaitingPod(assumed.Pod.UID); w != nil && !w.Decided() {
			s.parked = append(s.parked, parkedBinding{state: state, fw: fw, result: result, assumed: assumed, start: start})
			s.ResolveWaiting(ctx)
			return
		}
		// Siblings this pod's Permit allowed bind first, in the order they
		// were parked, then the pod itself.
		s.ResolveWaiting(ctx)
		s.runBindingCycle(ctx, state, fw, result, assumed, start)
		if !state.IsPodGroupSchedulingCycle() && state.PlacementCycleState() == nil {
			s.recycleState(state)
		}
		s.ResolveWaiting(ctx)
		return
	}
	s.bindWG.Add(1)
	go func() {
		defer s.bindWG.Done()
		s.runBindingCycle(ctx, state, fw, result, assumed, start)
	}()
}

var clearNominatedNode = &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride}

// recycleState keeps state, emptied, for the next cycle: a state costs
// an allocation of about 700 bytes per pod otherwise. Only for a state
// nothing refers to any more: a cycle's whose binding cycle ran in the
// scheduling goroutine and is over (not one parked at Permit, whose
// binding cycle reads it later). Plugins keep no CycleState beyond the
// calls they get it in, and their StateData values stay theirs: only the
// list holding them is reused, cleared.
func (s *Scheduler) recycleState(state *schedcore.CycleState) {
	releaseScoreBuffers(state)
	cr, _ := state.Runner().(*cycleRun)
	state.Reset()
	if cr != nil {
		cr.reset()
		state.SetRunner(cr)
	}
	s.spareState.Store(state)
}

// loopCycle are the scheduler loop's cycle options: it reads nothing of a
// successful cycle's scores but the chosen node's and the runner-up's, nor
// of its diagnosis but the nodes evaluated.
var loopCycle = CycleOptions{ReuseScoreBuffers: true, DiagnoseFailuresOnly: true}

func (s *Scheduler) schedulingCycle(ctx context.Context, state *schedcore.CycleState, fw *Framework, qpi *schedcore.QueuedPodInfo) (ScheduleResult, *schedcore.QueuedPodInfo, *schedcore.Status) {
	s.Cache.UpdateSnapshot(s.snapshot)
	algStart := time.Now()
	result, diag, err := s.Algorithm.SchedulePodWith(ctx, fw, state, qpi.Pod, loopCycle)
	if s.Recorder != nil {
		s.Recorder.AlgorithmDuration(time.Since(algStart))
	}
	if err == nil && diag != nil {
		// A node was found: nothing reads the rejections any more (the
		// result has their count), so their list serves the next cycles.
		// A failure's map is its FitError's and is kept.
		diag.NodeToStatus.Release()
	}
	if err != nil {
		if errors.Is(err, ErrNoNodesAvailable) {
			return ScheduleResult{NominatingInfo: clearNominatedNode}, qpi, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable).WithError(err)
		}
		var fitErr *schedcore.FitError
		if !errors.As(err, &fitErr) {
			return ScheduleResult{NominatingInfo: clearNominatedNode}, qpi, schedcore.AsStatus(err)
		}
		if !fw.HasPostFilterPlugins() {
			fitErr.Settle()
			return ScheduleResult{NominatingInfo: clearNominatedNode}, qpi, schedcore.NewStatus(schedcore.Unschedulable).WithError(fitErr)
		}
		pfResult, pfStatus := fw.RunPostFilterPlugins(ctx, state, qpi.Pod, fitErr.Diagnosis.NodeToStatus)
		fitErr.Diagnosis.PostFilterMsg = pfStatus.Message()
		// The message is final: formatted once for the failure handling,
		// which then releases the node statuses (handleFailure).
		fitErr.Settle()
		var nominating *schedcore.NominatingInfo
		if pfResult != nil {
			nominating = pfResult.NominatingInfo
		}
		return ScheduleResult{NominatingInfo: nominating}, qpi, schedcore.NewStatus(schedcore.Unschedulable).WithError(fitErr)
	}

	assumed, st := s.prepareForBindingCycle(ctx, state, fw, qpi, result)
	if !st.IsSuccess() {
		return ScheduleResult{NominatingInfo: clearNominatedNode}, assumed, st
	}
	return result, assumed, nil
}

// prepareForBindingCycle assumes the pod on the chosen node in the cache,
// runs Reserve and Permit (a waiting pod is recorded); on failure nothing
// of the pod stays counted.
func (s *Scheduler) prepareForBindingCycle(ctx context.Context, state *schedcore.CycleState, fw *Framework, qpi *schedcore.QueuedPodInfo, result ScheduleResult) (*schedcore.QueuedPodInfo, *schedcore.Status) {
	// Assume: account the pod on the node before binding. kube assumes a
	// deep copy of the pod; here pods are never changed in place (the
	// drivers' stores and informers replace objects), so a copy of the
	// top-level object with the node set is that copy, and it keeps the
	// terms the queue parsed. The cache and the binding cycle share its
	// PodInfo.
	assumed := *qpi
	podCopy := new(v1.Pod)
	*podCopy = *qpi.Pod
	podCopy.Spec.NodeName = result.SuggestedHost
	assumed.PodInfo = qpi.PodInfo.ForPod(podCopy)
	if err := s.Cache.AssumePodInfo(assumed.PodInfo); err != nil {
		return &assumed, schedcore.AsStatus(err)
	}
	s.Queue.DeleteNominatedPodIfExists(podCopy)

	if st := fw.RunReservePluginsReserve(ctx, state, podCopy, result.SuggestedHost); !st.IsSuccess() {
		s.unreserveAndForget(ctx, state, fw, &assumed, result.SuggestedHost)
		if st.IsRejected() {
			return &assumed, schedcore.NewStatus(st.Code()).WithError(singleNodeFitError(qpi.Pod, result.SuggestedHost, st))
		}
		return &assumed, st
	}
	waits, st := fw.RunPermitPlugins(ctx, state, podCopy, result.SuggestedHost)
	if st.IsWait() {
		fw.AddWaitingPod(podCopy, waits)
	} else if !st.IsSuccess() {
		s.unreserveAndForget(ctx, state, fw, &assumed, result.SuggestedHost)
		if st.IsRejected() {
			return &assumed, schedcore.NewStatus(st.Code()).WithError(singleNodeFitError(qpi.Pod, result.SuggestedHost, st))
		}
		return &assumed, st
	}
	return &assumed, nil
}

func singleNodeFitError(pod *v1.Pod, node string, st *schedcore.Status) *schedcore.FitError {
	fe := &schedcore.FitError{Pod: pod, NumAllNodes: 1, Diagnosis: schedcore.Diagnosis{NodeToStatus: schedcore.NewNodeToStatus()}}
	fe.Diagnosis.NodeToStatus.Set(node, st)
	fe.Diagnosis.AddPluginStatus(st)
	return fe
}

// unreserveAndForget undoes Reserve in reverse plugin order and forgets the
// assumed pod, so nothing of it stays counted; a pod rejected while waiting
// at Permit leaves the waiting map only then.
func (s *Scheduler) unreserveAndForget(ctx context.Context, state *schedcore.CycleState, fw *Framework, assumed *schedcore.QueuedPodInfo, node string) {
	fw.RunReservePluginsUnreserve(ctx, state, assumed.Pod, node)
	s.Cache.ForgetPod(assumed.Pod)
	fw.forgetWaitingPod(assumed.Pod.UID)
}

// ResolveWaiting runs, with SyncBinding, the parked binding cycles whose
// Permit wait has been decided (allowed, rejected or timed out), in the
// order they were parked, until none is left that can run. It returns how
// many ran. Drivers call it after moving a fake clock.
func (s *Scheduler) ResolveWaiting(ctx context.Context) int {
	ran := 0
	for {
		i := -1
		for j, p := range s.parked {
			if w := p.fw.GetWaitingPod(p.assumed.Pod.UID); w == nil || w.Decided() {
				i = j
				break
			}
		}
		if i < 0 {
			return ran
		}
		p := s.parked[i]
		s.parked = append(s.parked[:i:i], s.parked[i+1:]...)
		s.runBindingCycle(ctx, p.state, p.fw, p.result, p.assumed, p.start)
		ran++
	}
}

// NumParked counts binding cycles waiting at Permit (SyncBinding only).
func (s *Scheduler) NumParked() int { return len(s.parked) }

func (s *Scheduler) runBindingCycle(ctx context.Context, state *schedcore.CycleState, fw *Framework, result ScheduleResult, assumed *schedcore.QueuedPodInfo, start time.Time) {
	st := s.bindingCycle(ctx, state, fw, result, assumed)
	if st.IsSuccess() {
		if s.Recorder != nil {
			s.Recorder.ScheduleAttempt(fw.profileName, "scheduled", s.Clock.Since(start))
			if assumed.InitialAttemptTimestamp != nil {
				s.Recorder.PodScheduled(fw.profileName, assumed.Attempts, s.Clock.Since(*assumed.InitialAttemptTimestamp))
			}
		}
		if s.Hooks.Scheduled != nil {
			s.Hooks.Scheduled(ctx, fw, assumed, result.SuggestedHost, result)
		}
		return
	}
	// Binding failed: forget the pod; its resources free up like a delete.
	s.unreserveAndForget(ctx, state, fw, assumed, result.SuggestedHost)
	pod := assumed.Pod
	if st.IsRejected() {
		defer s.Queue.MoveAllToActiveOrBackoffQueue(s.Logger, schedcore.EventAssignedPodDelete, pod, nil, func(p *v1.Pod) bool { return p.UID != pod.UID })
	} else {
		s.Queue.MoveAllToActiveOrBackoffQueue(s.Logger, schedcore.EventAssignedPodDelete, pod, nil, nil)
	}
	s.handleFailure(ctx, fw, assumed, st, clearNominatedNode, start)
}

func (s *Scheduler) bindingCycle(ctx context.Context, state *schedcore.CycleState, fw *Framework, result ScheduleResult, assumed *schedcore.QueuedPodInfo) *schedcore.Status {
	pod := assumed.Pod
	if st := fw.WaitOnPermit(ctx, pod); !st.IsSuccess() {
		if st.IsRejected() {
			fe := singleNodeFitError(pod, result.SuggestedHost, st)
			fe.Diagnosis.UnschedulablePlugins = sets.New(st.Plugin())
			return schedcore.NewStatus(st.Code()).WithError(fe)
		}
		return st
	}
	s.Queue.Done(pod.UID)
	if st := fw.RunPreBindPlugins(ctx, state, pod, result.SuggestedHost); !st.IsSuccess() {
		return st
	}
	if st := fw.RunBindPlugins(ctx, state, pod, result.SuggestedHost); !st.IsSuccess() {
		return st
	}
	s.Cache.FinishBinding(pod)
	if fw.handle.Events() != nil {
		fw.handle.Events().Eventf(pod, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, result.SuggestedHost)
	}
	fw.RunPostBindPlugins(ctx, state, pod, result.SuggestedHost)
	return nil
}

// handleFailure requeues the pod with its rejector plugins, updates the
// nomination and tells the driver, as kube's handleSchedulingFailure.
func (s *Scheduler) handleFailure(ctx context.Context, fw *Framework, qpi *schedcore.QueuedPodInfo, st *schedcore.Status, nominating *schedcore.NominatingInfo, start time.Time) {
	reason := ReasonSchedulerError
	result := "error"
	if st.IsRejected() {
		reason, result = ReasonUnschedulable, "unschedulable"
	}
	if s.Recorder != nil {
		s.Recorder.ScheduleAttempt(fw.profileName, result, s.Clock.Since(start))
	}
	q := *qpi
	q.UnschedulablePlugins, q.PendingPlugins = nil, nil
	err := st.AsError()
	var fitErr *schedcore.FitError
	if errors.As(err, &fitErr) {
		q.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		q.PendingPlugins = fitErr.Diagnosis.PendingPlugins
		if s.Recorder != nil {
			s.Recorder.Unschedulable(fw.profileName, sets.List(fitErr.Diagnosis.UnschedulablePlugins))
		}
	}
	pod := q.Pod
	requeued := false
	cur := pod
	if s.Hooks.CurrentPod != nil {
		cur = s.Hooks.CurrentPod(pod)
	}
	if cur != nil && cur.Spec.NodeName == "" && cur.UID == pod.UID {
		// kube parses the current pod anew; its terms are the attempt's
		// when its affinity is the same object (forPod).
		q.PodInfo = qpi.PodInfo.ForPod(cur)
		if e := s.Queue.AddUnschedulableIfNotPresent(s.Logger, &q, s.Queue.SchedulingCycle()); e != nil {
			s.Logger.Error(e, "requeueing pod", "pod", schedcore.PodName(pod))
		}
		requeued = true
	}
	if !requeued {
		s.Queue.Done(pod.UID)
	}
	if nominating != nil {
		s.Queue.AddNominatedPod(s.Logger, q.PodInfo, nominating)
	}
	if fw.handle.Events() != nil {
		fw.handle.Events().Eventf(q.Pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%s", TruncateMessage(st.Message()))
	}
	if s.Hooks.Failed != nil {
		s.Hooks.Failed(ctx, fw, &q, reason, st, nominating)
	}
	if fitErr != nil {
		// Nothing reads the cycle's node statuses any more (kube drops
		// the FitError here): their list serves the next cycles, the
		// FitError keeps its message.
		fitErr.Release()
	}
}

// NoteLengthLimit is the Event note limit kube truncates messages at.
const NoteLengthLimit = 1024

// TruncateMessage cuts a message at NoteLengthLimit with a " ..." suffix.
func TruncateMessage(m string) string {
	if len(m) <= NoteLengthLimit {
		return m
	}
	return m[:NoteLengthLimit-4] + " ..."
}

// FrameworkForPod returns the profile of the pod's schedulerName.
func (s *Scheduler) FrameworkForPod(pod *v1.Pod) (*Framework, error) {
	fw, ok := s.Profiles[pod.Spec.SchedulerName]
	if !ok {
		return nil, fmt.Errorf("profile not found for scheduler name %q", pod.Spec.SchedulerName)
	}
	return fw, nil
}
