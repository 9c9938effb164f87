package schedcore

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// NoNodeAvailableMsg starts every FitError message.
const NoNodeAvailableMsg = "0/%v nodes are available"

// NodeToStatus maps rejected nodes to their statuses; nodes not in the map
// get AbsentNodesStatus (UnschedulableAndUnresolvable by default), which is
// how a PreFilter rejection or a PreFilterResult reaches every node cheaply.
//
// The statuses are kept in a list, in the order they were set; the index by
// name is built when a lookup or an update needs it, so a cycle that
// rejects thousands of nodes appends to a slice rather than filling a map
// it will never read.
type NodeToStatus struct {
	entries []nodeStatus
	mu      sync.Mutex
	index   map[string]int // position in entries; nil until needed
	// scans counts the lookups answered by reading entries, before the
	// index is built (see find).
	scans  int
	absent *Status
}

// scanLookups is how many lookups a map answers by reading its entries
// before it builds its index by name: preemption looks up one node (the
// pod's nominated one) in the map of a failed cycle, and indexing the
// 100,000 nodes such a cycle rejects for it was 7% of a 100,000-node
// dry-run.
const scanLookups = 4

type nodeStatus struct {
	node string
	s    *Status
}

// NewNodeToStatus returns an empty map with the default absent status.
func NewNodeToStatus() *NodeToStatus {
	return &NodeToStatus{absent: NewStatus(UnschedulableAndUnresolvable)}
}

// statusLists holds the entry lists that maps gave back (Release), for the
// next cycles' maps: a cycle that rejects most of 5000 nodes fills a list
// of that size, and making it anew each cycle was most of the dry-run's
// allocated bytes.
var statusLists sync.Pool // of *[]nodeStatus

// NewCycleNodeToStatus is NewNodeToStatus with a list given back by an
// earlier cycle, when there is one.
func NewCycleNodeToStatus() *NodeToStatus {
	n := NewNodeToStatus()
	if p, _ := statusLists.Get().(*[]nodeStatus); p != nil {
		n.entries = (*p)[:0]
	}
	return n
}

// Release gives the map's list to later cycles and leaves the map empty.
// Only for a map that nothing reads any more: a successful scheduling
// cycle's, or a failed one's once its failure is handled (FitError.release:
// the FitError keeps its message and drops the map).
func (n *NodeToStatus) Release() {
	if n == nil || cap(n.entries) == 0 {
		return
	}
	e := n.entries
	clear(e) // the list must not keep the statuses and names alive
	n.entries, n.index, n.scans = nil, nil, 0
	e = e[:0]
	statusLists.Put(&e)
}

// indexed returns the index by name, building it on first use.
func (n *NodeToStatus) indexed() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.index == nil {
		n.index = make(map[string]int, len(n.entries))
		for i, e := range n.entries {
			n.index[e.node] = i
		}
	}
	return n.index
}

// Get returns the node's status, or the absent status.
func (n *NodeToStatus) Get(node string) *Status {
	if s, ok := n.Explicit(node); ok {
		return s
	}
	return n.absent
}

// Explicit returns the node's own status, if it has one.
func (n *NodeToStatus) Explicit(node string) (*Status, bool) {
	if len(n.entries) == 0 {
		return nil, false
	}
	if i, ok := n.find(node); ok {
		return n.entries[i].s, true
	}
	return nil, false
}

// find returns the node's position in entries: by reading them for the
// first scanLookups lookups of a map without an index, from the index
// after.
func (n *NodeToStatus) find(node string) (int, bool) {
	n.mu.Lock()
	scan := n.index == nil && n.scans < scanLookups
	if scan {
		n.scans++
	}
	n.mu.Unlock()
	if !scan {
		i, ok := n.indexed()[node]
		return i, ok
	}
	for i := range n.entries {
		if n.entries[i].node == node {
			return i, true
		}
	}
	return -1, false
}

// Grow makes room for k more explicit statuses (a list sized once rather
// than grown step by step over thousands of rejected nodes). A list that
// must grow at least doubles: lists go back to later cycles (Release), and
// one made for a cycle that rejected few nodes then soon holds what any
// cycle rejects, rather than being replaced whenever a cycle rejects more.
func (n *NodeToStatus) Grow(k int) {
	if cap(n.entries)-len(n.entries) < k {
		n.entries = append(make([]nodeStatus, 0, max(len(n.entries)+k, 2*cap(n.entries))), n.entries...)
	}
}

// Set records a node's status.
func (n *NodeToStatus) Set(node string, s *Status) {
	idx := n.indexed()
	if i, ok := idx[node]; ok {
		n.entries[i].s = s
		return
	}
	idx[node] = len(n.entries)
	n.entries = append(n.entries, nodeStatus{node, s})
}

// SetNew records the status of a node that has none yet, without
// consulting the index (the filter loop, over distinct nodes, into a map
// that was empty when it started).
func (n *NodeToStatus) SetNew(node string, s *Status) {
	if n.index != nil {
		n.Set(node, s)
		return
	}
	n.entries = append(n.entries, nodeStatus{node, s})
}

// Len counts nodes with an explicit status.
func (n *NodeToStatus) Len() int { return len(n.entries) }

// AbsentNodesStatus is the status of nodes not in the map.
func (n *NodeToStatus) AbsentNodesStatus() *Status { return n.absent }

// SetAbsentNodesStatus sets the status of nodes not in the map.
func (n *NodeToStatus) SetAbsentNodesStatus(s *Status) { n.absent = s }

// ForEachExplicitNode calls fn for each node with an explicit status, in
// the order they were first set.
func (n *NodeToStatus) ForEachExplicitNode(fn func(node string, s *Status)) {
	for _, e := range n.entries {
		fn(e.node, e.s)
	}
}

// NodesForStatusCode lists, out of all nodes, those whose status has the code.
//
// Preemption asks this of every failed cycle, over every node. The filter
// pass records the nodes it rejects in list order, from the cycle's first
// node around the list, so the entry of a node is most often the one after
// the previous node's: it is taken when it names the node, and the node is
// looked up by name otherwise. Building and reading the index by name for
// each failed cycle was a tenth of a 100,000-node dry-run.
func (n *NodeToStatus) NodesForStatusCode(all []*NodeInfo, code Code) []*NodeInfo {
	var out []*NodeInfo
	e := n.entries
	next := 0
	if len(e) > 0 && len(all) > 0 {
		// Where the list's first node is, if anywhere.
		first := all[0].Name()
		for i := range e {
			if e[i].node == first {
				next = i
				break
			}
		}
	}
	for _, ni := range all {
		s := n.absent
		if len(e) > 0 {
			name := ni.Name()
			if next == len(e) {
				next = 0
			}
			if e[next].node == name {
				s = e[next].s
				next++
			} else if i, ok := n.indexed()[name]; ok {
				s = e[i].s
				next = i + 1
			}
		}
		if s.Code() == code {
			out = append(out, ni)
		}
	}
	return out
}

// Diagnosis records why a pod failed to schedule.
type Diagnosis struct {
	NodeToStatus         *NodeToStatus
	UnschedulablePlugins sets.Set[string]
	PendingPlugins       sets.Set[string]
	PreFilterMsg         string
	PostFilterMsg        string
	// LeftOutBy are the PreFilter plugins whose PreFilterResults left
	// nodes out of the cycle (the absent nodes' status names them).
	LeftOutBy []string
	// RejectedUnrecorded counts the nodes a successful cycle's filter
	// pass rejected without recording them in NodeToStatus
	// (CycleState.DiagnoseFailuresOnly).
	RejectedUnrecorded int
}

// Evaluated counts the nodes the filters rejected (the feasible ones
// aside): those in NodeToStatus and those counted only.
func (d *Diagnosis) Evaluated() int { return d.NodeToStatus.Len() + d.RejectedUnrecorded }

// AddPluginStatus records the plugin of a rejecting status.
func (d *Diagnosis) AddPluginStatus(s *Status) {
	if s.Plugin() == "" {
		return
	}
	if s.IsRejected() {
		if d.UnschedulablePlugins == nil {
			d.UnschedulablePlugins = sets.New[string]()
		}
		d.UnschedulablePlugins.Insert(s.Plugin())
	}
	if s.Code() == Pending {
		if d.PendingPlugins == nil {
			d.PendingPlugins = sets.New[string]()
		}
		d.PendingPlugins.Insert(s.Plugin())
	}
}

// FitError is returned when no node fits the pod. Its Error() is
// kube-scheduler's FitError message, word for word.
type FitError struct {
	Pod         *v1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis

	// settled is what the scheduler keeps of a failed cycle's FitError
	// once its per-node statuses go back to later cycles (settle).
	settled *settledFit
}

// settledFit is what is read of a FitError after its scheduling cycle:
// the message (drivers, events) and whether a node status rejected the
// pod for its group (RejectedForGroup).
type settledFit struct {
	msg      string
	forGroup bool
}

// Settle computes, once PostFilter has run, what is read of the FitError
// after its cycle, so that the failure handling formats the message once
// and its node statuses can be released when it is done (Release). The
// FitError must not change afterwards.
func (f *FitError) Settle() {
	f.settled = nil
	f.settled = &settledFit{msg: f.Error(), forGroup: f.rejectedForGroup()}
}

// Release gives the per-node statuses of a settled FitError to later
// cycles: its Diagnosis.NodeToStatus becomes nil (never a list another
// cycle fills); its message and RejectedForGroup stay as they were.
func (f *FitError) Release() {
	if f.settled == nil || f.Diagnosis.NodeToStatus == nil {
		return
	}
	n := f.Diagnosis.NodeToStatus
	f.Diagnosis.NodeToStatus = nil
	n.Release()
}

// Error formats "0/N nodes are available: <prefilter msg>. | <sorted
// histogram of reasons>. <postfilter msg>".
func (f *FitError) Error() string {
	if f.settled != nil {
		return f.settled.msg
	}
	msg := fmt.Sprintf(NoNodeAvailableMsg+":", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		msg += " " + f.Diagnosis.PreFilterMsg + "."
	} else if hist := f.ReasonHistogram(); len(hist) > 0 {
		msg += " " + strings.Join(hist, ", ") + "."
	}
	if f.Diagnosis.PostFilterMsg != "" {
		msg += " " + f.Diagnosis.PostFilterMsg
	}
	return msg
}

// ReasonHistogram returns "<count> <reason>" entries, sorted as strings.
func (f *FitError) ReasonHistogram() []string {
	reasons := map[string]int{}
	n2s := f.Diagnosis.NodeToStatus
	if n2s == nil {
		return nil
	}
	// Neighbouring nodes mostly fail for the same reasons: a run of equal
	// reason lists is counted once and added when it ends (a map
	// assignment per node and reason was a quarter of replay's CPU at
	// 10,000 nodes, where every retry of a pending pod formats this).
	var run []string
	count := 0
	flush := func() {
		for _, r := range run {
			reasons[r] += count
		}
	}
	n2s.ForEachExplicitNode(func(_ string, s *Status) {
		rs := s.Reasons()
		if count > 0 && slices.Equal(rs, run) {
			count++
			return
		}
		flush()
		run, count = rs, 1
	})
	flush()
	if n2s.Len() < f.NumAllNodes {
		for _, r := range n2s.AbsentNodesStatus().Reasons() {
			reasons[r] += f.NumAllNodes - n2s.Len()
		}
	}
	out := make([]string, 0, len(reasons))
	for k, v := range reasons {
		out = append(out, fmt.Sprintf("%v %v", v, k))
	}
	sort.Strings(out)
	return out
}

// RejectedForGroup reports whether a failed attempt's status rejected the
// pod for the sake of its group rather than its own fit: the status, or
// one of the node statuses of its FitError (the PreFilter status when
// PreFilter rejected every node), is marked ForGroup.
func RejectedForGroup(st *Status) bool {
	if st.IsForGroup() {
		return true
	}
	var fe *FitError
	if !errors.As(st.Err(), &fe) {
		return false
	}
	if fe.settled != nil {
		return fe.settled.forGroup
	}
	return fe.rejectedForGroup()
}

// rejectedForGroup reports whether one of the FitError's node statuses
// (the PreFilter status when PreFilter rejected every node) is ForGroup.
func (f *FitError) rejectedForGroup() bool {
	n2s := f.Diagnosis.NodeToStatus
	if n2s == nil {
		return false
	}
	if f.Diagnosis.PreFilterMsg != "" && n2s.AbsentNodesStatus().IsForGroup() {
		return true
	}
	for _, e := range n2s.entries {
		if e.s.IsForGroup() {
			return true
		}
	}
	return false
}
