package coscheduling

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.Coscheduling

// Reasons. Those of scheduler-plugins' Coscheduling and of kube's in-tree
// GangScheduling, word for word.
const (
	// ErrReasonWaitingForMinCount gates a gang's pods in PreEnqueue until
	// minMember (minCount) of them exist (kube's GangScheduling).
	ErrReasonWaitingForMinCount = "waiting for minCount pods from a gang to appear in scheduling queue"
	// ErrReasonWaitingForPodGroupFormat gates a pod whose native PodGroup
	// does not exist yet (kube's GangScheduling).
	ErrReasonWaitingForPodGroupFormat = "waiting for pods's pod group %q to appear in scheduling queue"
	// ErrReasonFailedRecentlyFormat rejects a group in its backoff.
	ErrReasonFailedRecentlyFormat = "podGroup %v failed recently"
	// ErrReasonNotEnoughSiblingsFormat rejects a pod whose group has fewer
	// pods than minMember.
	ErrReasonNotEnoughSiblingsFormat = "pre-filter pod %v cannot find enough sibling pods, current pods number: %v, minMember of group: %v"
	// ErrReasonResourceGapFormat rejects a group whose minResources the
	// cluster cannot hold.
	ErrReasonResourceGapFormat = "resource gap: %v"
	// ErrReasonPodGroupNotFound rejects, at Permit, a labelled pod without
	// its PodGroup.
	ErrReasonPodGroupNotFound = "PodGroup not found"
	// ErrReasonGroupRejectedFormat is PostFilter's message when it rejects
	// the whole group.
	ErrReasonGroupRejectedFormat = "PodGroup %v gets rejected due to Pod %v is unschedulable even after PostFilter"
	// ReasonWaitingForGang is the Wait message for native gangs (kube's).
	ReasonWaitingForGang = "waiting for minCount pods from a gang to be scheduled"
	// RejectionInPostFilter is why waiting siblings are rejected when a
	// member fails its filters.
	RejectionInPostFilter = "optimistic rejection in PostFilter"
	// RejectionInUnreserve is why waiting siblings are rejected when a
	// member is unreserved (rejected, timed out, or failed to bind).
	RejectionInUnreserve = "rejection in Unreserve"
)

// Coscheduling places a group of pods all together or not at all.
type Coscheduling struct {
	h              *schedcore.Handle
	defaultTimeout time.Duration
	// nativeOff turns the native-PodGroup mapping off (GenericWorkload
	// on: kube schedules those pods as pod groups).
	nativeOff bool
	backoff   time.Duration
	groups    groupCache

	mu sync.Mutex
	// firstSeen is when PreEnqueue first saw a member of a group, the
	// group's queue time when its PodGroup has no creationTimestamp.
	firstSeen map[string]time.Time
	// reserved holds the members reserved (assumed) in this scheduler, by
	// group: the runtime state Reserve and Unreserve keep.
	reserved map[string]sets.Set[types.UID]
	// backedOff holds groups in backoff until the given time.
	backedOff map[string]time.Time
	// permitted holds groups whose minResources check passed, until when.
	permitted map[string]time.Time
	// failedIn holds, for groups rejected in PostFilter, what the rest of
	// the cluster looked like then: until it changes, trying the group
	// again could only fail again (and, since its own release frees
	// resources, would retry forever).
	failedIn map[string]clusterState
}

// clusterState sums up the nodes and the pods outside a group.
type clusterState struct {
	nodes, pods int
	cpu, memory int64
}

var (
	_ schedcore.PreEnqueuePlugin  = (*Coscheduling)(nil)
	_ schedcore.QueueSortPlugin   = (*Coscheduling)(nil)
	_ schedcore.PreFilterPlugin   = (*Coscheduling)(nil)
	_ schedcore.PostFilterPlugin  = (*Coscheduling)(nil)
	_ schedcore.ReservePlugin     = (*Coscheduling)(nil)
	_ schedcore.PermitPlugin      = (*Coscheduling)(nil)
	_ schedcore.EnqueueExtensions = (*Coscheduling)(nil)
	_ schedcore.NodeLocalPlugin   = (*Coscheduling)(nil)
	_ schedcore.PodGroupPlugin    = (*Coscheduling)(nil)
)

// NodeLocal is true for pods in no group: the plugin lets them through.
// A member's fate depends on its siblings wherever they go.
func (pl *Coscheduling) NodeLocal(pod *v1.Pod) bool {
	_, member := pl.groupOf(pod)
	return !member
}

// New builds the plugin from *CoschedulingArgs (nil means defaults).
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	args := &CoschedulingArgs{}
	if obj != nil {
		a, ok := obj.(*CoschedulingArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type CoschedulingArgs, got %T", obj)
		}
		args = a.DeepCopyObject().(*CoschedulingArgs)
	}
	SetDefaults(args)
	if err := Validate(args); err != nil {
		return nil, err
	}
	return &Coscheduling{
		h:              h,
		nativeOff:      h != nil && h.Features().GenericWorkload,
		defaultTimeout: time.Duration(*args.PermitWaitingTimeSeconds) * time.Second,
		backoff:        time.Duration(*args.PodGroupBackoffSeconds) * time.Second,
		firstSeen:      map[string]time.Time{},
		reserved:       map[string]sets.Set[types.UID]{},
		backedOff:      map[string]time.Time{},
		permitted:      map[string]time.Time{},
		failedIn:       map[string]clusterState{},
	}, nil
}

// Name returns the plugin's name.
func (pl *Coscheduling) Name() string { return Name }

// id tells the two forms apart in the plugin's maps.
func id(r ref) string {
	if r.native {
		return "native:" + r.key()
	}
	return r.key()
}

// assigned counts the group's members that are bound or reserved here,
// leaving out except and members rejected while waiting at Permit (their
// reservation is on its way out).
func (pl *Coscheduling) assigned(r ref, except types.UID) int {
	pl.mu.Lock()
	res := pl.reserved[id(r)].Clone()
	pl.mu.Unlock()
	n := 0
	for _, p := range pl.siblings(r) {
		if p.UID == except {
			continue
		}
		if p.Spec.NodeName == "" && !res.Has(p.UID) {
			continue
		}
		if w := pl.h.GetWaitingPod(p.UID); w != nil && w.Rejected() {
			continue
		}
		n++
	}
	return n
}

func (pl *Coscheduling) timeout(g *group) time.Duration {
	if g.timeout > 0 {
		return g.timeout
	}
	return pl.defaultTimeout
}

// PreEnqueue holds a gang's pods until minMember of them exist, and a
// native group's pods until their PodGroup exists.
func (pl *Coscheduling) PreEnqueue(_ context.Context, p *v1.Pod) *schedcore.Status {
	r, g, member := pl.lookup(p)
	if !member {
		return nil
	}
	pl.mu.Lock()
	if _, ok := pl.firstSeen[id(r)]; !ok {
		pl.firstSeen[id(r)] = pl.h.Clock().Now()
	}
	pl.mu.Unlock()
	if g == nil {
		if r.native && pl.h.Objects() != nil {
			return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonWaitingForPodGroupFormat, r.name))
		}
		return nil
	}
	if !g.gang || pl.h.Objects() == nil {
		return nil
	}
	if len(pl.siblings(r)) < int(g.minMember) {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonWaitingForMinCount)
	}
	return nil
}

// Less orders the queue by priority, then by the group's creation time
// (a pod's own queue time outside groups), then by group, then by pod, so
// a group's pods of equal priority stay together and two groups never
// interleave.
func (pl *Coscheduling) Less(a, b *schedcore.QueuedPodInfo) bool {
	pa, pb := a.Priority(), b.Priority()
	if pa != pb {
		return pa > pb
	}
	ta, ka := pl.sortKey(a)
	tb, kb := pl.sortKey(b)
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if ka != kb {
		return ka < kb
	}
	return schedcore.PodName(a.Pod) < schedcore.PodName(b.Pod)
}

func (pl *Coscheduling) sortKey(q *schedcore.QueuedPodInfo) (time.Time, string) {
	t := q.Timestamp
	if q.InitialAttemptTimestamp != nil {
		t = *q.InitialAttemptTimestamp
	}
	r, g, member := pl.lookup(q.Pod)
	if !member {
		return t, schedcore.PodName(q.Pod)
	}
	if g != nil && !g.created.IsZero() {
		return g.created, r.key()
	}
	pl.mu.Lock()
	seen, ok := pl.firstSeen[id(r)]
	pl.mu.Unlock()
	if ok {
		return seen, r.key()
	}
	return t, r.key()
}

// PreFilter rejects, before any node is tried, a pod whose group is in
// backoff, has fewer than minMember pods, or whose minResources the
// cluster cannot hold.
func (pl *Coscheduling) PreFilter(_ context.Context, _ *schedcore.CycleState, p *v1.Pod, nodes []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	r, g, member := pl.lookup(p)
	if !member || g == nil || !g.gang {
		return nil, nil
	}
	now := pl.h.Clock().Now()
	k := id(r)
	pl.mu.Lock()
	until, off := pl.backedOff[k]
	pl.mu.Unlock()
	if off && now.Before(until) {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonFailedRecentlyFormat, r.key())).ForGroup()
	}
	pl.mu.Lock()
	was, failed := pl.failedIn[k]
	pl.mu.Unlock()
	if failed {
		if was == pl.stateOutside(r, nodes) {
			return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonFailedRecentlyFormat, r.key())).ForGroup()
		}
		pl.mu.Lock()
		delete(pl.failedIn, k)
		pl.mu.Unlock()
	}
	if pl.h.Objects() != nil {
		if n := len(pl.siblings(r)); n < int(g.minMember) {
			return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonNotEnoughSiblingsFormat, p.Name, n, g.minMember))
		}
	}
	if len(g.minResources) == 0 {
		return nil, nil
	}
	pl.mu.Lock()
	ok, valid := pl.permitted[k]
	pl.mu.Unlock()
	if valid && now.Before(ok) {
		return nil, nil
	}
	if gap := pl.resourceGap(r, g, nodes); gap != "" {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonResourceGapFormat, gap))
	}
	pl.mu.Lock()
	pl.permitted[k] = now.Add(pl.timeout(g))
	pl.mu.Unlock()
	return nil, nil
}

// PostFilter rejects the waiting siblings of a gang member no node fits,
// releasing their reservations at once, unless the group already has
// minMember pods placed or lacks no more than a tenth of them (then a
// later member may still complete it, as in scheduler-plugins).
func (pl *Coscheduling) PostFilter(_ context.Context, _ *schedcore.CycleState, p *v1.Pod, _ *schedcore.NodeToStatus) (*schedcore.PostFilterResult, *schedcore.Status) {
	r, g, member := pl.lookup(p)
	if !member || g == nil || !g.gang {
		// scheduler-plugins adds "can not find pod group" here; leaving the
		// message empty keeps other pods' FitError messages kube's.
		return &schedcore.PostFilterResult{}, schedcore.NewStatus(schedcore.Unschedulable)
	}
	assigned := pl.assigned(r, p.UID)
	if assigned >= int(g.minMember) {
		return &schedcore.PostFilterResult{}, schedcore.NewStatus(schedcore.Unschedulable)
	}
	if notAssigned := float32(int(g.minMember)-assigned) / float32(g.minMember); notAssigned <= 0.1 {
		return &schedcore.PostFilterResult{}, schedcore.NewStatus(schedcore.Unschedulable)
	}
	pl.rejectWaiting(r, RejectionInPostFilter)
	k := id(r)
	state := pl.stateOutside(r, pl.h.Snapshot().List())
	pl.mu.Lock()
	pl.failedIn[k] = state
	if pl.backoff > 0 && len(pl.siblings(r)) >= int(g.minMember) {
		pl.backedOff[k] = pl.h.Clock().Now().Add(pl.backoff)
	}
	delete(pl.permitted, k)
	pl.mu.Unlock()
	return &schedcore.PostFilterResult{}, schedcore.NewStatus(schedcore.Unschedulable, fmt.Sprintf(ErrReasonGroupRejectedFormat, r.key(), p.Name))
}

// rejectWaiting rejects every waiting member of the group.
func (pl *Coscheduling) rejectWaiting(r ref, msg string) {
	pl.h.IterateOverWaitingPods(func(w schedcore.WaitingPod) {
		if pl.inGroup(w.Pod(), r) {
			w.Reject(Name, msg)
		}
	})
}

// reserveStateKey holds, in a gang member's cycle state, the cluster
// outside its group as its scheduling cycle saw it (see Reserve).
const reserveStateKey schedcore.StateKey = "Reserve" + Name

// reserveState is the clusterState a gang member's Reserve took.
type reserveState struct{ outside clusterState }

// Clone returns the state itself: it is never modified.
func (s *reserveState) Clone() schedcore.StateData { return s }

// Reserve records the member as reserved and, for a gang member, takes
// the state of the cluster outside its group for Unreserve: Unreserve may
// run on the binding goroutine, while the scheduling goroutine refreshes
// the snapshot, so it must not read the snapshot itself.
func (pl *Coscheduling) Reserve(_ context.Context, state *schedcore.CycleState, p *v1.Pod, _ string) *schedcore.Status {
	r, g, member := pl.lookup(p)
	if !member {
		return nil
	}
	if state != nil && g != nil && g.gang {
		state.Write(reserveStateKey, &reserveState{outside: pl.stateOutside(r, pl.h.Snapshot().List())})
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	s := pl.reserved[id(r)]
	if s == nil {
		s = sets.New[types.UID]()
		pl.reserved[id(r)] = s
	}
	s.Insert(p.UID)
	return nil
}

// Unreserve forgets the member's reservation and rejects its waiting
// siblings: one member failing after Reserve (rejected, timed out, failed
// to bind) releases the whole group.
func (pl *Coscheduling) Unreserve(_ context.Context, cs *schedcore.CycleState, p *v1.Pod, _ string) {
	r, g, member := pl.lookup(p)
	if !member {
		return
	}
	k := id(r)
	pl.mu.Lock()
	if s := pl.reserved[k]; s != nil {
		s.Delete(p.UID)
		if s.Len() == 0 {
			delete(pl.reserved, k)
		}
	}
	pl.mu.Unlock()
	if g == nil || !g.gang {
		return
	}
	pl.rejectWaiting(r, RejectionInUnreserve)
	// The group failed as it stands (a member rejected or timed out): like
	// a rejection in PostFilter, it is not retried until the rest of the
	// cluster changes, so a gang that keeps timing out within the 10%
	// margin cannot starve the groups queued after it. "As it stands" is
	// the cluster the member's own cycle saw (taken in Reserve), so a
	// change since then retries the group; a failure a sibling recorded
	// since (PostFilter, Unreserve) is newer and stays.
	var rs *reserveState
	if cs != nil {
		if d, err := cs.Read(reserveStateKey); err == nil {
			rs, _ = d.(*reserveState)
		}
	}
	pl.mu.Lock()
	delete(pl.permitted, k)
	if _, recorded := pl.failedIn[k]; rs != nil && !recorded {
		pl.failedIn[k] = rs.outside
	}
	pl.mu.Unlock()
}

// Permit makes a gang member wait until minMember members are bound or
// reserved, then allows them all. The first member to wait activates its
// pending siblings so the group is tried together.
func (pl *Coscheduling) Permit(_ context.Context, _ *schedcore.CycleState, p *v1.Pod, _ string) (*schedcore.Status, time.Duration) {
	r, g, member := pl.lookup(p)
	if !member {
		return nil, 0
	}
	if g == nil {
		return schedcore.NewStatus(schedcore.Unschedulable, ErrReasonPodGroupNotFound), 0
	}
	if !g.gang {
		return nil, 0
	}
	assigned := pl.assigned(r, p.UID)
	if int32(assigned)+1 >= g.minMember {
		pl.h.IterateOverWaitingPods(func(w schedcore.WaitingPod) {
			if pl.inGroup(w.Pod(), r) {
				w.Allow(Name)
			}
		})
		return nil, 0
	}
	if assigned == 0 {
		pl.activateSiblings(r, p)
	}
	var st *schedcore.Status
	if r.native {
		st = schedcore.NewStatus(schedcore.Wait, ReasonWaitingForGang)
	} else {
		st = schedcore.NewStatus(schedcore.Wait)
	}
	return st, pl.timeout(g)
}

// activateSiblings moves the group's other pending pods to activeQ.
func (pl *Coscheduling) activateSiblings(r ref, p *v1.Pod) {
	pods := map[string]*v1.Pod{}
	for _, s := range pl.siblings(r) {
		if s.UID != p.UID && s.Spec.NodeName == "" {
			pods[schedcore.PodName(s)] = s
		}
	}
	pl.h.Activate(pods)
}

// PodGroup returns the pod's gang as "namespace/name" with its
// minMember; ok is false for a pod in no gang (no group, no PodGroup, or a
// native PodGroup with the basic policy).
func (pl *Coscheduling) PodGroup(p *v1.Pod) (schedcore.GroupSummary, bool) {
	r, g, member := pl.lookup(p)
	if !member || g == nil || !g.gang {
		return schedcore.GroupSummary{}, false
	}
	return schedcore.GroupSummary{Name: r.key(), MinMember: int(g.minMember)}, true
}
