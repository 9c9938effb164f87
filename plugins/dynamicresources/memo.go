package dynamicresources

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// allocationMemo remembers the allocator's answer for a node, so that the
// many pods of one template, or a pod retried, do not run the allocator
// again on nodes where nothing it reads has changed. What the allocator
// reads for a node is: the DeviceClasses, ResourceSlices and
// DeviceTaintRules (the manager's objects revision), the node (its name
// and labels: which shared slices apply), the specs of the claims to
// allocate, and what is allocated in the pools the node sees. An entry is
// keyed by exactly these: the objects revision, the node object, the
// claims' specs, and, per pool the node sees, the set of allocated
// devices, shared allocations and consumed capacities (interned), except
// for pools none of whose devices the claims can select, which count by
// their content only (relevance.go). Results
// that depend on more (errors naming a claim, timeouts, cancellations)
// are not kept.
type allocationMemo struct {
	// mu guards the memo; lookup holds it for reading only.
	mu sync.RWMutex
	// objRev is the objects revision the node pools and entries are for.
	objRev int64
	// slices indexes the objects revision's slices.
	slices *sliceIndex
	// nodes holds, per node, the pools of the slices that apply to it
	// and the answers for it.
	nodes map[string]*nodeMemo
	// tables are the answers, per claims (interned specs), by node
	// (memotable.go).
	tables map[int64]*claimsTable
	// size counts the answers kept, slots the tables' slots; maxSlots
	// is maxMemoSlots (tests lower it).
	size, slots, maxSlots int
	// ids interns fingerprints (pool contents, node signatures, claims).
	ids map[string]int64
	// lastSpec and lastID: the claims last interned (one cycle's claims
	// ask for every node).
	lastSpec string
	lastID   int64
	// failures are the allocator's failures by failKey: whether a node's
	// devices can serve the claims does not depend on names (the allocator
	// reads devices, their attributes, capacities, counters and taints,
	// what is taken, the classes and the claims; names only in results).
	failures map[failKey]error
	// successes are the allocator's successes by failKey, handed to a
	// node with the same signature under its own names (share.go).
	successes map[failKey]success
	// taken are answers by claims and kept pools' contents, with what
	// was taken in them (taken.go).
	taken map[failKey][]takenAnswer
	// pruned are the slices for the allocator (prune.go).
	pruned prunedLists
	// localTo names, per pool, the node all its slices are for ("" for
	// pools shared between nodes); mixed marks the pools whose slices
	// apply to different nodes (share.go).
	localTo map[string]string
	mixed   map[string]bool
	// staticSig holds each pool's content signature for objRev (its slices
	// in name order without node and pool names; the pool's name itself
	// where devices choose their nodes); dynSig the interned signatures of
	// (pool, version).
	staticSig map[string]string
	dynSig    map[poolAt]int64
	// poolSlices are each pool's slices and staticID its interned static
	// signature, for objRev; relevant says whether the claims may select
	// a device of a pool with that content (relevance.go).
	poolSlices map[string][]*resourceapi.ResourceSlice
	staticID   map[string]int64
	relevant   map[relKey]bool
	// sel evaluates selectors for relevant; nil: every pool is relevant.
	sel *selection
	// plain, inert and exact are plainPoolLocked's, inertPoolLocked's and
	// exactCountsLocked's answers (monotone.go).
	plain map[string]bool
	inert map[string]bool
	exact map[int64]bool
	// shortfalls are FilterShortfall's answers by node signature, of
	// the epoch (explain_share.go); epoch counts the resets.
	shortfalls map[shortfallKey]float64
	epoch      int64
	// disabled turns the memo off (tests compare with and without it).
	disabled bool
}

type poolAt struct {
	pool    string
	version int64
}

// nodeMemo is what the memo keeps for a node object: the pools of the
// slices that apply to it. The answers are in the claims' tables
// (memotable.go).
type nodeMemo struct {
	node  *v1.Node
	pools []string
}

// failKey keys the failures: the claims and the node's pools by content
// (name-independent signatures, in the allocator's pool order), so that
// nodes with the same devices and the same ones taken share an answer.
type failKey struct {
	claims int64
	sig    int64
}

type memoEntry struct {
	// versions are the relevant pools' versions, -1 for the others.
	versions []int64
	results  []resourceapi.AllocationResult
	err      error
}

// memoInputs are a cycle's view: the objects revision, the slices (with
// the node-local ones by node), and each pool's allocation version.
type memoInputs struct {
	objRev  int64
	slices  *sliceIndex
	poolVer map[string]int64
	// poolItems is what is taken in each pool (allocatedStates), for the
	// pools' signatures (poolSigLocked).
	poolItems map[string]map[string]int
	// changes are the pools' change logs (monotone.go); nil: none.
	changes map[string][]poolChange
}

// sliceIndex is the slices of one objects revision, the node-local ones
// by node name.
type sliceIndex struct {
	byNode map[string][]*resourceapi.ResourceSlice
	shared []*resourceapi.ResourceSlice
	// selectors are the shared slices' node selectors (and their
	// devices'), compiled on first use.
	selectors map[*v1.NodeSelector]compiledSelector
}

type compiledSelector struct {
	sel *nodeaffinity.NodeSelector
	err error
}

// maxMemoEntries bounds the memo's answers, maxMemoSlots the slots of its
// tables (memotable.go: a table holds a slot per list position up to the
// last node asked, answered or not); it starts over when either is full.
const (
	maxMemoEntries = 1 << 16
	maxMemoSlots   = 1 << 20
)

// MemoDisabled turns the allocation memo of plugins built afterwards off:
// every node then runs the allocator. Tests use it to show the memo
// changes no decision.
var MemoDisabled atomic.Bool

func newAllocationMemo() *allocationMemo {
	return &allocationMemo{disabled: MemoDisabled.Load(), maxSlots: maxMemoSlots, nodes: map[string]*nodeMemo{}, tables: map[int64]*claimsTable{}, ids: map[string]int64{},
		failures: map[failKey]error{}, staticSig: map[string]string{}, dynSig: map[poolAt]int64{},
		poolSlices: map[string][]*resourceapi.ResourceSlice{}, staticID: map[string]int64{}, relevant: map[relKey]bool{},
		successes: map[failKey]success{}, taken: map[failKey][]takenAnswer{}, shortfalls: map[shortfallKey]float64{}, localTo: map[string]string{}, mixed: map[string]bool{}, plain: map[string]bool{}, inert: map[string]bool{}, exact: map[int64]bool{}}
}

func (m *allocationMemo) internLocked(s string) int64 {
	if id, ok := m.ids[s]; ok {
		return id
	}
	id := int64(len(m.ids) + 1)
	m.ids[s] = id
	return id
}

// inputs captures the cycle's view for the memo. poolVer is read during
// the cycle's filters only; the next PreFilter updates it.
func (m *allocationMemo) inputs(dra *schedcore.DRAManager, poolVer map[string]int64, poolItems map[string]map[string]int) *memoInputs {
	rev := dra.ObjectsRevision()
	if m.disabled {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resetLocked(rev)
	if m.slices == nil {
		idx := &sliceIndex{byNode: map[string][]*resourceapi.ResourceSlice{}, selectors: map[*v1.NodeSelector]compiledSelector{}}
		for _, s := range dra.Slices() {
			if n := ptr.Deref(s.Spec.NodeName, ""); n != "" {
				idx.byNode[n] = append(idx.byNode[n], s)
			} else {
				idx.shared = append(idx.shared, s)
			}
		}
		m.slices = idx
		m.buildStaticSigsLocked(dra.Slices())
	}
	return &memoInputs{objRev: rev, slices: m.slices, poolVer: poolVer, poolItems: poolItems}
}

// resetLocked drops everything computed for another objects revision.
func (m *allocationMemo) resetLocked(rev int64) {
	if rev == m.objRev && m.size < maxMemoEntries && m.slots < m.maxSlots {
		return
	}
	m.objRev = rev
	m.epoch++
	clear(m.shortfalls)
	m.slices = nil
	clear(m.nodes)
	clear(m.tables)
	m.slots = 0
	m.size = 0
	clear(m.ids)
	m.lastSpec, m.lastID = "", 0
	clear(m.failures)
	clear(m.staticSig)
	clear(m.dynSig)
	clear(m.poolSlices)
	clear(m.staticID)
	clear(m.relevant)
	clear(m.successes)
	clear(m.taken)
	m.pruned = prunedLists{}
	clear(m.localTo)
	clear(m.mixed)
	clear(m.plain)
	clear(m.inert)
	clear(m.exact)
}

// nodePoolsLocked returns the pools of the slices that apply to the node,
// matched as the allocator's GatherPools matches them.
func (m *allocationMemo) nodePoolsLocked(in *memoInputs, node *v1.Node) (*nodeMemo, error) {
	if nm, ok := m.nodes[node.Name]; ok && nm.node == node {
		return nm, nil
	}
	set := map[string]bool{}
	for _, s := range in.slices.byNode[node.Name] {
		set[s.Spec.Driver+"/"+s.Spec.Pool.Name] = true
	}
	for _, s := range in.slices.shared {
		relevant := false
		switch {
		case ptr.Deref(s.Spec.AllNodes, false):
			relevant = true
		case s.Spec.NodeSelector != nil:
			ok, err := in.slices.match(s.Spec.NodeSelector, node)
			if err != nil {
				return nil, err
			}
			relevant = ok
		case ptr.Deref(s.Spec.PerDeviceNodeSelection, false):
			for _, d := range s.Spec.Devices {
				ok := false
				switch {
				case ptr.Deref(d.NodeName, "") != "":
					ok = *d.NodeName == node.Name
				case ptr.Deref(d.AllNodes, false):
					ok = true
				case d.NodeSelector != nil:
					var err error
					if ok, err = in.slices.match(d.NodeSelector, node); err != nil {
						return nil, err
					}
				}
				if ok {
					relevant = true
					break
				}
			}
		}
		if relevant {
			set[s.Spec.Driver+"/"+s.Spec.Pool.Name] = true
		}
	}
	pools := make([]string, 0, len(set))
	for p := range set {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	nm := &nodeMemo{node: node, pools: pools}
	m.nodes[node.Name] = nm
	return nm, nil
}

// match reports whether the node selector sel, one of the slices', selects
// the node; it is compiled once (the memo's lock is held).
func (x *sliceIndex) match(sel *v1.NodeSelector, node *v1.Node) (bool, error) {
	c, ok := x.selectors[sel]
	if !ok {
		c.sel, c.err = nodeaffinity.NewNodeSelector(sel)
		x.selectors[sel] = c
	}
	if c.err != nil {
		return false, c.err
	}
	return c.sel.Match(node), nil
}

// allocate returns run's answer for the node, from the memo when the same
// inputs were seen before. The memo's results are shared: callers only
// read them (Reserve copies the chosen node's). pos is the node's position
// in the snapshot list (-1: none), where the claims' table keeps its entry.
func (m *allocationMemo) allocate(ctx context.Context, in *memoInputs, pos int, node *v1.Node, claims []*resourceapi.ResourceClaim, specs func() (string, error), run func(context.Context) ([]resourceapi.AllocationResult, error)) ([]resourceapi.AllocationResult, error) {
	if m.disabled || in == nil {
		return run(ctx)
	}
	spec, err := specs()
	if err != nil {
		return run(ctx)
	}
	if e, ok := m.lookup(in, pos, node, spec); ok {
		return e.results, e.err
	}
	m.mu.Lock()
	if m.objRev != in.objRev {
		// The objects changed since this cycle's PreFilter.
		m.mu.Unlock()
		return run(ctx)
	}
	nm, err := m.nodePoolsLocked(in, node)
	if err != nil {
		m.mu.Unlock()
		return run(ctx)
	}
	if spec != m.lastSpec || m.lastID == 0 {
		m.lastSpec, m.lastID = spec, m.internLocked(spec)
	}
	claimsID := m.lastID
	sl := m.slotLocked(claimsID, pos, node.Name)
	if sl.node != node || sl.nm != nm {
		m.clearSlotLocked(sl, claimsSlot{node: node, nm: nm})
	}
	if sl.rel == nil {
		rel := make([]bool, len(nm.pools))
		for i, p := range nm.pools {
			rel[i] = m.relevantLocked(ctx, claimsID, claims, p)
		}
		if ctx.Err() != nil {
			m.mu.Unlock()
			return run(ctx)
		}
		sl.rel = rel
	}
	rel := sl.rel
	if sl.has && sl.valid(in) {
		m.mu.Unlock()
		return sl.e.results, sl.e.err
	}
	if sl.has && m.stillHoldsLocked(in, claimsID, claims, sl) {
		e := memoEntry{versions: make([]int64, len(nm.pools)), results: sl.e.results}
		for i, p := range nm.pools {
			e.versions[i] = -1
			if rel[i] {
				e.versions[i] = in.poolVer[p]
			}
		}
		m.keepLocked(sl, e)
		m.mu.Unlock()
		return e.results, nil
	}
	fail, kept := m.failSigLocked(in, nm, rel, node)
	failk := failKey{claims: claimsID, sig: m.internLocked(fail)}
	versions := make([]int64, len(nm.pools))
	for i, p := range nm.pools {
		versions[i] = -1
		if rel[i] {
			versions[i] = in.poolVer[p]
		}
	}
	if ferr, failed := m.failures[failk]; failed {
		// The node's own entry: the next cycles find it without writing
		// the signature again, until one of its pools changes.
		m.keepLocked(sl, memoEntry{versions: versions, err: ferr})
		m.mu.Unlock()
		return nil, ferr
	}
	if sc, ok := m.successes[failk]; ok {
		if results, ok := m.translateLocked(sc, node.Name, kept.pools); ok {
			m.keepLocked(sl, memoEntry{versions: versions, results: results})
			m.mu.Unlock()
			return results, nil
		}
	}
	takenKey, byTaken := m.takenKeyLocked(claimsID, claims, kept)
	if byTaken {
		if results, ok := m.takenAnswerLocked(in, takenKey, node.Name, kept); ok {
			m.keepLocked(sl, memoEntry{versions: versions, results: results})
			if results == nil {
				m.failures[failk] = nil
			}
			m.mu.Unlock()
			return results, nil
		}
	}
	m.mu.Unlock()
	results, err := run(ctx)
	if err != nil && !errors.Is(err, structured.ErrFailedAllocationOnNode) {
		return results, err
	}
	if ctx.Err() != nil {
		return results, err
	}
	m.mu.Lock()
	// The slot is found again (the table may have grown, or been dropped
	// by a reset) and kept only while it is still the node's.
	if m.objRev == in.objRev && m.nodes[node.Name] == nm {
		sl := m.slotLocked(claimsID, pos, node.Name)
		if sl.node != node || sl.nm != nm || sl.rel == nil {
			m.clearSlotLocked(sl, claimsSlot{node: node, nm: nm, rel: rel})
		}
		m.keepLocked(sl, memoEntry{versions: versions, results: copyResults(results), err: err})
		if results == nil && len(m.staticSig) > 0 {
			m.failures[failk] = err
		}
		if results != nil && err == nil {
			m.successes[failk] = success{node: nm.node.Name, pools: kept.pools, results: copyResults(results)}
		}
		if byTaken && err == nil {
			m.keepTakenLocked(in, takenKey, node.Name, kept, results)
		}
	}
	m.mu.Unlock()
	return results, err
}
