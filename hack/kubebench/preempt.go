package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// The -preemption mode runs kube-scheduler's own loop (queue, scheduling
// and binding cycles, PostFilter with DefaultPreemption) on a fake
// clientset until it is quiet, and records what it did through the API:
// bindings, victims deleted (with their preemptor, from the "Preempted"
// events), nominatedNodeName patches, and the PodScheduled=False messages
// of the pods left pending.
//
// To make the outcome depend on decisions only, not on goroutine timing:
//   - SchedulerAsyncPreemption is off, so victims are deleted inside
//     PostFilter (same evaluation, same victims; only when differs);
//   - each cycle first waits until the scheduler cache has seen every
//     deletion made so far, so no cycle sees a victim that is already gone
//     from the API;
//   - the nominated node tried first is the pod's latest one in the API
//     (kube reads the queued copy, which the informer updates moments
//     after the patch);
//   - ties between equal best scores go to the lowest node name, as in the
//     placement mode.

type eviction struct {
	Pod       string `json:"pod"`
	Node      string `json:"node"`
	Preemptor string `json:"preemptor"`
}

type nomination struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

type preemptResult struct {
	Placements    []placement  `json:"placements"`
	Evictions     []eviction   `json:"evictions"`
	Nominations   []nomination `json:"nominations"`
	Unschedulable []failure    `json:"unschedulable"`
	// client is the fake API at the end (the -gang mode reads the
	// PodGroups' status from it); failedScheduling the last
	// FailedScheduling event's message per object ("Kind ns/name").
	client           *fake.Clientset
	failedScheduling map[string]string
	// The loop's figures: wall and CPU time from Scheduler.Run to the
	// last new decision (apiLog.decide; the retries and the quiet wait
	// after it are not counted), and the scheduling attempts (SchedulePod
	// calls: a pod-group cycle makes one per member it tries, retries
	// included).
	loopWall, loopCPU time.Duration
	attempts          int
}

// quietWithBackoff, when set (the -gang mode), makes the loop quiet once
// nothing is active and the API has seen no call for that long, pods in
// backoffQ or not.
var quietWithBackoff time.Duration

// untilDecided, when set (kubebench -gang-until-decided, for hack/bench),
// also ends the loop once every pending pod has had a decision (bound, or
// failed once) and no new one came for 3 s, or when none came for 30 s
// (a pod kube never tried, held at PreEnqueue): failed gangs are retried
// from backoffQ for ever, and with dozens of them (make bench's 5000-node
// gang workload) the quiet above did not come in 8 minutes.
var untilDecided bool

// recorder captures the scheduler's events.
type recorder struct {
	mu        sync.Mutex
	preempted []eviction
	failed    map[string]string
}

func (r *recorder) Eventf(regarding, related runtime.Object, _, reason, _, note string, args ...interface{}) {
	if reason == "FailedScheduling" {
		if m, err := meta.Accessor(regarding); err == nil {
			kind := fmt.Sprintf("%T", regarding)
			kind = kind[strings.LastIndex(kind, ".")+1:]
			r.mu.Lock()
			if r.failed == nil {
				r.failed = map[string]string{}
			}
			msg := note
			if len(args) > 0 {
				msg = fmt.Sprintf(note, args...)
			}
			r.failed[kind+" "+key(m)] = msg
			r.mu.Unlock()
		}
		return
	}
	if reason != "Preempted" {
		return
	}
	// The related object is kube's podExecutorPreemptor wrapping the pod.
	victim, err1 := meta.Accessor(regarding)
	preemptor, err2 := meta.Accessor(related)
	if err1 != nil || err2 != nil {
		return
	}
	msg := fmt.Sprintf(note, args...)
	node := msg[strings.LastIndex(msg, " on node ")+len(" on node "):]
	r.mu.Lock()
	r.preempted = append(r.preempted, eviction{Pod: key(victim), Node: node, Preemptor: key(preemptor)})
	r.mu.Unlock()
}

func (r *recorder) WithLogger(klog.Logger) events.EventRecorderLogger { return r }

func key(p metav1.Object) string { return p.GetNamespace() + "/" + p.GetName() }

// apiLog records the API calls the reactors see.
type apiLog struct {
	mu       sync.Mutex
	bound    []placement
	deleted  []*v1.Pod
	activity int
	// decided holds the pods that have had a decision: a binding, or a
	// status patch (the first failure's PodScheduled=False); lastWall and
	// lastCPU are when the last new decision came (the wall clock and the
	// process's CPU time). A retry that fails again decides nothing new.
	decided  map[string]bool
	lastWall time.Time
	lastCPU  time.Duration
}

// decide records pod's decision (bound: a binding, which is always one);
// l.mu is held.
func (l *apiLog) decide(pod string, bound bool) {
	if l.decided == nil {
		l.decided = map[string]bool{}
	}
	if bound || !l.decided[pod] {
		l.decided[pod] = true
		l.lastWall, l.lastCPU = time.Now(), cpuTime()
	}
}

func (l *apiLog) touch() { l.mu.Lock(); l.activity++; l.mu.Unlock() }

func runPreemption(ctx context.Context, cl *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32) (*preemptResult, error) {
	return runPreemptionAfter(ctx, cl, cfg, percentage, nil)
}

// runPreemptionAfter is runPreemption with changes made through the API
// once the scheduler has synced and before the pending pods are created
// (a drain's cordons, deletions and evictions, which the running
// scheduler's informers deliver).
func runPreemptionAfter(ctx context.Context, cl *cluster, cfg *schedulerapi.KubeSchedulerConfiguration, percentage int32, change func(context.Context, *fake.Clientset, *bench) error) (*preemptResult, error) {
	if err := utilfeature.DefaultMutableFeatureGate.Set("SchedulerAsyncPreemption=false"); err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	var initial []runtime.Object
	for _, o := range cl.objects {
		if p, ok := o.(*v1.Pod); ok && p.Spec.NodeName == "" {
			continue
		}
		initial = append(initial, o)
	}
	client := fake.NewClientset(initial...)
	simulateDeviceDrivers(client)
	log := &apiLog{}
	tracker := client.Tracker()
	podsGVR := v1.SchemeGroupVersion.WithResource("pods")
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		ca := a.(clienttesting.CreateAction)
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := ca.GetObject().(*v1.Binding)
		obj, err := tracker.Get(podsGVR, b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod).DeepCopy()
		pod.Spec.NodeName = b.Target.Name
		pod.Status.NominatedNodeName = "" // ClearingNominatedNodeNameAfterBinding
		if err := tracker.Update(podsGVR, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		log.mu.Lock()
		log.bound = append(log.bound, placement{Pod: key(pod), Node: b.Target.Name})
		log.activity++
		log.decide(key(pod), true)
		log.mu.Unlock()
		return true, b, nil
	})
	client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		da := a.(clienttesting.DeleteAction)
		if obj, err := tracker.Get(podsGVR, da.GetNamespace(), da.GetName()); err == nil {
			log.mu.Lock()
			log.deleted = append(log.deleted, obj.(*v1.Pod).DeepCopy())
			log.activity++
			log.mu.Unlock()
		}
		return false, nil, nil
	})
	client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		log.mu.Lock()
		log.activity++
		if a.GetSubresource() == "status" {
			log.decide(a.GetNamespace()+"/"+a.(clienttesting.PatchAction).GetName(), false)
		}
		log.mu.Unlock()
		return false, nil, nil
	})

	rec := &recorder{}
	factory := scheduler.NewInformerFactory(client, 0, nil)
	snapshot := internalcache.NewEmptySnapshot()
	recorders := profile.RecorderFactory(func(string) events.EventRecorderLogger { return rec })
	sched, err := scheduler.New(ctx, client, factory, nil, recorders,
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPercentageOfNodesToScore(&percentage),
		scheduler.WithNodeInfoSnapshot(snapshot),
	)
	if err != nil {
		return nil, err
	}
	b := &bench{sched: sched, snapshot: snapshot, percentage: percentage}

	var nomMu sync.Mutex
	var noms []nomination
	podInformer := factory.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj interface{}) {
		o, n := oldObj.(*v1.Pod), newObj.(*v1.Pod)
		if n.Status.NominatedNodeName != "" && n.Status.NominatedNodeName != o.Status.NominatedNodeName {
			nomMu.Lock()
			noms = append(noms, nomination{Pod: key(n), Node: n.Status.NominatedNodeName})
			nomMu.Unlock()
		}
	}}); err != nil {
		return nil, err
	}

	var attempts atomic.Int64
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, qpi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		attempts.Add(1)
		// A pod group's members are tried one after another against the
		// snapshot the pod-group cycle took, holding the members it has
		// assumed so far: it must not be refreshed from the cache.
		if g := qpi.Pod.Spec.SchedulingGroup; g == nil || !genericWorkload() {
			// Let the cache catch up with every deletion made so far.
			log.mu.Lock()
			deleted := append([]*v1.Pod(nil), log.deleted...)
			log.mu.Unlock()
			for _, d := range deleted {
				for i := 0; i < 5000; i++ {
					if _, err := sched.Cache.GetPod(d); err != nil {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
			if err := sched.Cache.UpdateSnapshot(logger, snapshot); err != nil {
				return scheduler.ScheduleResult{}, err
			}
		}
		pod := qpi.Pod
		if obj, err := tracker.Get(podsGVR, pod.Namespace, pod.Name); err == nil {
			if nnn := obj.(*v1.Pod).Status.NominatedNodeName; nnn != pod.Status.NominatedNodeName {
				pod = pod.DeepCopy()
				pod.Status.NominatedNodeName = nnn
			}
		}
		node, fitErr, err := b.schedulePod(ctx, f, state, pod)
		if err != nil {
			return scheduler.ScheduleResult{}, err
		}
		if fitErr != nil {
			return scheduler.ScheduleResult{}, fitErr
		}
		return scheduler.ScheduleResult{SuggestedHost: node}, nil
	}

	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for sched.Cache.NodeCount() < cl.nodes {
		time.Sleep(10 * time.Millisecond)
	}
	for {
		n, err := sched.Cache.PodCount()
		if err != nil {
			return nil, err
		}
		if n >= cl.bound {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if change != nil {
		if err := change(ctx, client, b); err != nil {
			return nil, err
		}
	}
	// Queue the pending pods one at a time, in queue order, so that equal
	// priorities keep that order in activeQ.
	pending := append([]*v1.Pod(nil), cl.pending...)
	queueOrder(pending)
	for i, p := range pending {
		if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		for {
			pods, _ := sched.SchedulingQueue.PendingPods()
			if len(pods) >= i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Millisecond) // distinct queue timestamps
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	log.mu.Lock()
	start, cpu0 := time.Now(), cpuTime()
	log.lastWall, log.lastCPU = start, cpu0
	log.mu.Unlock()
	go func() { sched.Run(runCtx); close(done) }()
	// Quiet: nothing active or backing off and no API call for 3 s.
	last, quietSince := -1, time.Now()
	for {
		time.Sleep(100 * time.Millisecond)
		_, summary := sched.SchedulingQueue.PendingPods()
		log.mu.Lock()
		act := log.activity
		log.mu.Unlock()
		busy := !strings.HasPrefix(summary, "activeQ:0; backoffQ:0;")
		if quietWithBackoff > 0 {
			// Gangs kube fails with an error status ("minCount (M) cannot
			// be satisfied") go back to backoffQ at every retry for ever:
			// quiet is then nothing active and no API call for longer
			// than the longest backoff.
			busy = !strings.HasPrefix(summary, "activeQ:0;")
		}
		if os.Getenv("KUBEBENCH_DEBUG") != "" {
			log.mu.Lock()
			decided := len(log.decided)
			log.mu.Unlock()
			fmt.Fprintf(os.Stderr, "kubebench: %s api=%d decided=%d/%d\n", summary, act, decided, len(pending))
		}
		if untilDecided {
			// Busy or not: the failed gangs' retries keep it busy.
			log.mu.Lock()
			n, lastDecision := len(log.decided), log.lastWall
			log.mu.Unlock()
			if (n >= len(pending) && time.Since(lastDecision) > 3*time.Second) || time.Since(lastDecision) > 30*time.Second {
				break
			}
		}
		if busy || act != last {
			last, quietSince = act, time.Now()
			continue
		}
		if time.Since(quietSince) > max(3*time.Second, quietWithBackoff) {
			break
		}
	}
	stop()
	<-done
	log.mu.Lock()
	loopWall, loopCPU := log.lastWall.Sub(start), log.lastCPU-cpu0
	log.mu.Unlock()

	res := &preemptResult{Placements: log.bound, Evictions: []eviction{}, Nominations: []nomination{}, Unschedulable: []failure{}, client: client,
		loopWall: loopWall, loopCPU: loopCPU, attempts: int(attempts.Load())}
	rec.mu.Lock()
	res.failedScheduling = rec.failed
	rec.mu.Unlock()
	if res.Placements == nil {
		res.Placements = []placement{}
	}
	rec.mu.Lock()
	res.Evictions = append(res.Evictions, rec.preempted...)
	rec.mu.Unlock()
	nomMu.Lock()
	res.Nominations = append(res.Nominations, noms...)
	nomMu.Unlock()
	sortEvictions(res.Evictions)
	sortNominations(res.Nominations)
	for _, p := range pending {
		obj, err := tracker.Get(podsGVR, p.Namespace, p.Name)
		if err != nil {
			continue // evicted
		}
		pod := obj.(*v1.Pod)
		if pod.Spec.NodeName != "" {
			continue
		}
		f := failure{Pod: key(pod)}
		for _, c := range pod.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				f.Message = c.Message
			}
		}
		res.Unschedulable = append(res.Unschedulable, f)
	}
	return res, nil
}

// Evictions and nominations are compared as sets: kube deletes the victims
// of one preemption in parallel.
func sortEvictions(e []eviction) {
	sort.Slice(e, func(i, j int) bool {
		if e[i].Preemptor != e[j].Preemptor {
			return e[i].Preemptor < e[j].Preemptor
		}
		return e[i].Pod < e[j].Pod
	})
}

func sortNominations(n []nomination) {
	sort.SliceStable(n, func(i, j int) bool { return n[i].Pod < n[j].Pod })
}
