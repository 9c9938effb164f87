package interpodaffinity

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Filter reasons, word for word kube-scheduler v1.37's.
const (
	// ErrReasonExistingAntiAffinityRulesNotMatch: an existing pod's required
	// anti-affinity rejects the incoming pod in the node's topology.
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	// ErrReasonAffinityRulesNotMatch: the node's topology has no pod matching
	// all of the incoming pod's required affinity terms.
	ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ErrReasonAntiAffinityRulesNotMatch: the node's topology has a pod the
	// incoming pod's required anti-affinity repels.
	ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
)

const preFilterStateKey schedcore.StateKey = "PreFilter" + Name

type topologyPair struct {
	key   string
	value string
}

// topologyToMatchedTermCount counts matched terms per topology pair.
type topologyToMatchedTermCount map[topologyPair]int64

func (m topologyToMatchedTermCount) clone() topologyToMatchedTermCount {
	c := make(topologyToMatchedTermCount, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// update adds value to the node's pair for key; an entry that drops to zero
// is deleted, so an empty map means "no match anywhere".
func (m topologyToMatchedTermCount) update(node *v1.Node, key string, value int64) {
	if tv, ok := node.Labels[key]; ok {
		pair := topologyPair{key: key, value: tv}
		m[pair] += value
		if m[pair] == 0 {
			delete(m, pair)
		}
	}
}

// updateWithAffinityTerms counts every term when pod matches all of them.
func (m topologyToMatchedTermCount) updateWithAffinityTerms(terms []schedcore.AffinityTerm, pod *v1.Pod, node *v1.Node, value int64) {
	if podMatchesAllAffinityTerms(terms, pod) {
		for i := range terms {
			m.update(node, terms[i].TopologyKey, value)
		}
	}
}

// updateWithAntiAffinityTerms counts each term pod matches.
func (m topologyToMatchedTermCount) updateWithAntiAffinityTerms(terms []schedcore.AffinityTerm, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, value int64) {
	for i := range terms {
		if terms[i].Matches(pod, nsLabels) {
			m.update(node, terms[i].TopologyKey, value)
		}
	}
}

// pairCounts is the per-node list form used while scanning in parallel.
type pairCounts []pairCount

type pairCount struct {
	pair  topologyPair
	count int64
}

func (l *pairCounts) record(node *v1.Node, key string, value int64) {
	if tv, ok := node.Labels[key]; ok {
		*l = append(*l, pairCount{pair: topologyPair{key: key, value: tv}, count: value})
	}
}

func (m topologyToMatchedTermCount) mergeList(l pairCounts) {
	for _, pc := range l {
		m[pc.pair] += pc.count
	}
}

// podMatchesAllAffinityTerms reports whether terms is non-empty and pod
// matches every term. The incoming pod's namespace selectors are merged into
// Namespaces, so no namespace labels are needed.
func podMatchesAllAffinityTerms(terms []schedcore.AffinityTerm, pod *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// podMatchesAnyAffinityTerms reports whether pod matches one of terms.
func podMatchesAnyAffinityTerms(terms []schedcore.AffinityTerm, pod *v1.Pod) bool {
	for i := range terms {
		if terms[i].Matches(pod, nil) {
			return true
		}
	}
	return false
}

// preFilterState is computed in PreFilter and read by Filter. With the
// InterPodAffinityHostnameFastPath gate off, the cluster-wide term lists are
// all of the pod's required terms and the host-scoped lists are empty; with
// it on, kubernetes.io/hostname-scoped terms are checked against the node's
// own pods instead (affinity only when every affinity term is host-scoped).
type preFilterState struct {
	// existingAntiAffinityCounts counts existing pods' required anti-affinity
	// terms the incoming pod matches (host-scoped ones excluded under the gate).
	existingAntiAffinityCounts topologyToMatchedTermCount
	// affinityCounts counts existing pods matching all clusterWideAffinityTerms.
	affinityCounts topologyToMatchedTermCount
	// antiAffinityCounts counts existing pods matching clusterWideAntiAffinityTerms.
	antiAffinityCounts topologyToMatchedTermCount

	podInfo         *schedcore.PodInfo
	namespaceLabels labels.Set

	hostScopedAffinityTerms      []schedcore.AffinityTerm
	hostScopedAntiAffinityTerms  []schedcore.AffinityTerm
	clusterWideAffinityTerms     []schedcore.AffinityTerm
	clusterWideAntiAffinityTerms []schedcore.AffinityTerm
	// matchingHostScopedAffinityPods counts pods anywhere matching all
	// hostScopedAffinityTerms (gate on, host-scoped affinity only).
	matchingHostScopedAffinityPods int64
	fastPath                       bool

	// The dense form of the three counts for Filter, when PreFilter counted
	// the snapshot list (dense nil otherwise). updateWithPod drops it from
	// the copy it changes; Filter then reads the maps.
	dense *denseCounts
}

// denseCounts holds the counts by label value id of the snapshot's label
// columns: per topology key of the clusterWideAffinityTerms, of the
// clusterWideAntiAffinityTerms (in term order) and of the keys in
// existingAntiAffinityCounts.
type denseCounts struct {
	list                     []*schedcore.NodeInfo
	affinity, anti, existing denseKeys
}

type denseKeys struct {
	cols   []*schedcore.LabelColumn
	counts [][]int64
}

// newDenseKeys returns zero counts over the label columns of keys, one
// per key (repeated keys included).
func newDenseKeys(snap *schedcore.Snapshot, keys []string) denseKeys {
	d := denseKeys{cols: make([]*schedcore.LabelColumn, len(keys)), counts: make([][]int64, len(keys))}
	for i, k := range keys {
		d.cols[i] = snap.LabelColumn(k)
		d.counts[i] = make([]int64, d.cols[i].NumValues())
	}
	return d
}

// denseFromMap spreads m's counts for keys over slices indexed by the keys'
// value ids (empty when m is: the checks then need nothing).
func denseFromMap(snap *schedcore.Snapshot, keys []string, m topologyToMatchedTermCount) denseKeys {
	if len(m) == 0 {
		return denseKeys{}
	}
	d := newDenseKeys(snap, keys)
	for pair, n := range m {
		for i, k := range keys {
			if pair.key != k {
				continue
			}
			if id, ok := d.cols[i].ID(pair.value); ok {
				d.counts[i][id] = n
			}
		}
	}
	return d
}

// at returns the count of key i's pair on node idx, and whether the node
// has the key.
func (d *denseKeys) at(i, idx int) (int64, bool) {
	id := d.cols[i].At(idx)
	if id < 0 {
		return 0, false
	}
	return d.counts[i][id], true
}

// initDense builds the dense form (PreFilter counted the snapshot list),
// with the incoming terms' counts incomingCountsDense summed.
func (s *preFilterState) initDense(snap *schedcore.Snapshot, affinity, anti denseKeys) {
	var existing []string
	for pair := range s.existingAntiAffinityCounts {
		if !slices.Contains(existing, pair.key) {
			existing = append(existing, pair.key)
		}
	}
	s.dense = &denseCounts{
		list:     snap.List(),
		affinity: affinity,
		anti:     anti,
		existing: denseFromMap(snap, existing, s.existingAntiAffinityCounts),
	}
}

// denseIndex is the node's index in the dense form, -1 without one.
func (s *preFilterState) denseIndex(ni *schedcore.NodeInfo) int {
	if s.dense == nil {
		return -1
	}
	return schedcore.IndexIn(s.dense.list, ni)
}

// Clone copies the counts, which AddPod/RemovePod change; the rest is shared.
func (s *preFilterState) Clone() schedcore.StateData {
	if s == nil {
		return nil
	}
	c := *s
	c.existingAntiAffinityCounts = s.existingAntiAffinityCounts.clone()
	c.affinityCounts = s.affinityCounts.clone()
	c.antiAffinityCounts = s.antiAffinityCounts.clone()
	return &c
}

// updateWithPod adds (multiplier 1) or removes (-1) an existing pod on node.
func (s *preFilterState) updateWithPod(pi *schedcore.PodInfo, node *v1.Node, multiplier int64) {
	if s == nil {
		return
	}
	s.dense = nil
	for i := range pi.RequiredAntiAffinityTerms {
		t := &pi.RequiredAntiAffinityTerms[i]
		if s.fastPath && t.TopologyKey == v1.LabelHostname {
			continue
		}
		if t.Matches(s.podInfo.Pod, s.namespaceLabels) {
			s.existingAntiAffinityCounts.update(node, t.TopologyKey, multiplier)
		}
	}
	s.affinityCounts.updateWithAffinityTerms(s.clusterWideAffinityTerms, pi.Pod, node, multiplier)
	s.antiAffinityCounts.updateWithAntiAffinityTerms(s.clusterWideAntiAffinityTerms, pi.Pod, nil, node, multiplier)
	if len(s.hostScopedAffinityTerms) > 0 && podMatchesAllAffinityTerms(s.hostScopedAffinityTerms, pi.Pod) {
		s.matchingHostScopedAffinityPods += multiplier
	}
}

// classifyTerms splits the pod's required terms by scope as kube's
// classifyTermsBasedOnScope does. Affinity terms stay together (one pod must
// match them all): they are host-scoped only if every one is.
func (s *preFilterState) classifyTerms() {
	aff, anti := s.podInfo.RequiredAffinityTerms, s.podInfo.RequiredAntiAffinityTerms
	if !s.fastPath {
		s.clusterWideAffinityTerms, s.clusterWideAntiAffinityTerms = aff, anti
		return
	}
	allHost := true
	for i := range aff {
		if aff[i].TopologyKey != v1.LabelHostname {
			allHost = false
			break
		}
	}
	if allHost {
		s.hostScopedAffinityTerms = aff
	} else {
		s.clusterWideAffinityTerms = aff
	}
	for _, t := range anti {
		if t.TopologyKey == v1.LabelHostname {
			s.hostScopedAntiAffinityTerms = append(s.hostScopedAntiAffinityTerms, t)
		} else {
			s.clusterWideAntiAffinityTerms = append(s.clusterWideAntiAffinityTerms, t)
		}
	}
}

// existingAntiAffinityCounts scans the existing pods with required
// anti-affinity on nodes and counts the terms the incoming pod matches. Under
// the gate, host-scoped terms are left to Filter and only reported.
func (pl *InterPodAffinity) existingAntiAffinityCounts(ctx context.Context, pod *v1.Pod, nsLabels labels.Set, nodes []*schedcore.NodeInfo) (topologyToMatchedTermCount, bool) {
	lists := make([]pairCounts, len(nodes))
	index := int32(-1)
	var hostScoped atomic.Bool
	var memo *schedcore.MemoTable[existingRow]
	if pl.existing != nil && pl.handle.Snapshot() != nil {
		memo = pl.existing.Acquire(pl.existingKey(pod), pl.handle.Snapshot().NumNodes())
		defer memo.Release()
	}
	pl.handle.Parallelizer().Until(ctx, len(nodes), func(i int) {
		n := nodes[i]
		var row existingRow
		ok := false
		if memo != nil {
			row, ok = memo.Get(n)
		}
		if !ok {
			row = pl.existingRowOf(n, pod, nsLabels)
			if memo != nil {
				memo.Put(n, row)
			}
		}
		if row.host {
			hostScoped.Store(true)
		}
		if len(row.pairs) != 0 {
			lists[atomic.AddInt32(&index, 1)] = row.pairs
		}
	})
	result := make(topologyToMatchedTermCount)
	for i := 0; i <= int(index); i++ {
		result.mergeList(lists[i])
	}
	return result, hostScoped.Load()
}

// existingRow is what one node's pods' required anti-affinity terms say of
// an incoming pod: the pairs of the terms it matches, and whether a
// hostname term was left to Filter (fast path).
type existingRow struct {
	pairs pairCounts
	host  bool
}

func (pl *InterPodAffinity) existingRowOf(n *schedcore.NodeInfo, pod *v1.Pod, nsLabels labels.Set) existingRow {
	node := n.Node()
	var row existingRow
	for _, existing := range n.PodsWithRequiredAntiAffinity {
		for j := range existing.RequiredAntiAffinityTerms {
			t := &existing.RequiredAntiAffinityTerms[j]
			if pl.fastPath && t.TopologyKey == v1.LabelHostname {
				row.host = true
			} else if t.Matches(pod, nsLabels) {
				row.pairs.record(node, t.TopologyKey, 1)
			}
		}
	}
	return row
}

// existingKey is what AffinityTerm.Matches reads of the incoming pod: its
// namespace and labels, and the namespaces' labels (by their generation).
func (pl *InterPodAffinity) existingKey(pod *v1.Pod) string {
	keys := make([]string, 0, len(pod.Labels))
	for k := range pod.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(strconv.FormatInt(pl.handle.Snapshot().NamespaceGeneration(), 10))
	b.WriteByte(0)
	b.WriteString(pod.Namespace)
	for _, k := range keys {
		b.WriteByte(0)
		v := pod.Labels[k]
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	return b.String()
}

// incomingCounts counts, over all pods of nodes, those matching all the
// affinity terms and each anti-affinity term.
func (pl *InterPodAffinity) incomingCounts(ctx context.Context, affinityTerms, antiAffinityTerms []schedcore.AffinityTerm, nodes []*schedcore.NodeInfo) (topologyToMatchedTermCount, topologyToMatchedTermCount) {
	aff, anti, _, _ := pl.incomingCountsDense(ctx, affinityTerms, antiAffinityTerms, nodes, nil)
	return aff, anti
}

// incomingCountsDense is incomingCounts that, given the snapshot (nodes
// being its list), also returns the counts by label value id per term (the
// dense form Filter reads), summed from the per-node rows without reading
// node labels; the maps are then built from them.
func (pl *InterPodAffinity) incomingCountsDense(ctx context.Context, affinityTerms, antiAffinityTerms []schedcore.AffinityTerm, nodes []*schedcore.NodeInfo, snap *schedcore.Snapshot) (topologyToMatchedTermCount, topologyToMatchedTermCount, denseKeys, denseKeys) {
	affinity := make(topologyToMatchedTermCount)
	antiAffinity := make(topologyToMatchedTermCount)
	if len(affinityTerms) == 0 && len(antiAffinityTerms) == 0 {
		return affinity, antiAffinity, denseKeys{}, denseKeys{}
	}
	// Per node: [pods matching all affinity terms, pods matching each
	// anti-affinity term...], remembered while the node is unchanged.
	var b strings.Builder
	var key strings.Builder
	for i := range affinityTerms {
		key.WriteString("A")
		key.WriteString(termKey(&b, &affinityTerms[i], 0))
	}
	for i := range antiAffinityTerms {
		key.WriteString("N")
		key.WriteString(termKey(&b, &antiAffinityTerms[i], 0))
	}
	t := pl.required.Acquire(key.String(), len(nodes))
	defer t.Release()
	rows := make([][]int32, len(nodes))
	pl.handle.Parallelizer().Until(ctx, len(nodes), func(i int) {
		n := nodes[i]
		row, ok := t.Get(n)
		if !ok {
			row = make([]int32, 1+len(antiAffinityTerms))
			for _, existing := range n.Pods {
				if podMatchesAllAffinityTerms(affinityTerms, existing.Pod) {
					row[0]++
				}
				for j := range antiAffinityTerms {
					if antiAffinityTerms[j].Matches(existing.Pod, nil) {
						row[1+j]++
					}
				}
			}
			t.Put(n, row)
		}
		rows[i] = row
	})
	if ctx.Err() != nil {
		return affinity, antiAffinity, denseKeys{}, denseKeys{}
	}
	if snap != nil {
		affD, antiD := newDenseKeys(snap, termKeys(affinityTerms)), newDenseKeys(snap, termKeys(antiAffinityTerms))
		for i, row := range rows {
			if c := int64(row[0]); c > 0 {
				for j := range affinityTerms {
					if id := affD.cols[j].At(i); id >= 0 {
						affD.counts[j][id] += c
					}
				}
			}
			for j := range antiAffinityTerms {
				if c := int64(row[1+j]); c > 0 {
					if id := antiD.cols[j].At(i); id >= 0 {
						antiD.counts[j][id] += c
					}
				}
			}
		}
		affD.fill(affinity, affinityTerms)
		antiD.fill(antiAffinity, antiAffinityTerms)
		if len(affinity) == 0 {
			affD = denseKeys{}
		}
		if len(antiAffinity) == 0 {
			antiD = denseKeys{}
		}
		return affinity, antiAffinity, affD, antiD
	}
	for i, row := range rows {
		node := nodes[i].Node()
		if c := int64(row[0]); c > 0 {
			for j := range affinityTerms {
				affinity.add(node, affinityTerms[j].TopologyKey, c)
			}
		}
		for j := range antiAffinityTerms {
			if c := int64(row[1+j]); c > 0 {
				antiAffinity.add(node, antiAffinityTerms[j].TopologyKey, c)
			}
		}
	}
	return affinity, antiAffinity, denseKeys{}, denseKeys{}
}

// termKeys lists the terms' topology keys, in term order.
func termKeys(terms []schedcore.AffinityTerm) []string {
	keys := make([]string, len(terms))
	for j := range terms {
		keys[j] = terms[j].TopologyKey
	}
	return keys
}

// fill adds the per-term counts into m by topology pair (terms with the
// same key add up, as the map form counts them).
func (d *denseKeys) fill(m topologyToMatchedTermCount, terms []schedcore.AffinityTerm) {
	for j := range terms {
		for id, n := range d.counts[j] {
			if n != 0 {
				m[topologyPair{key: terms[j].TopologyKey, value: d.cols[j].Values[id]}] += n
			}
		}
	}
}

// add adds count to the node's pair for key, if the node has the label.
func (m topologyToMatchedTermCount) add(node *v1.Node, key string, count int64) {
	if tv, ok := node.Labels[key]; ok {
		m[topologyPair{key: key, value: tv}] += count
	}
}

// countMatchingHostScopedAffinityPods counts the pods anywhere that match all
// host-scoped affinity terms (used for the first-pod-of-a-group exception).
func (pl *InterPodAffinity) countMatchingHostScopedAffinityPods(ctx context.Context, nodes []*schedcore.NodeInfo, terms []schedcore.AffinityTerm) int64 {
	var count atomic.Int64
	pl.handle.Parallelizer().Until(ctx, len(nodes), func(i int) {
		var local int64
		for _, existing := range nodes[i].Pods {
			if podMatchesAllAffinityTerms(terms, existing.Pod) {
				local++
			}
		}
		if local > 0 {
			count.Add(local)
		}
	})
	return count.Load()
}

// hasNonHostScopedRequiredAntiAffinity is kube's
// podWithRequiredNonHostScopedAntiAffinity (on the spec, not parsed terms).
func hasNonHostScopedRequiredAntiAffinity(p *v1.Pod) bool {
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if t.TopologyKey != v1.LabelHostname {
				return true
			}
		}
	}
	return false
}

// nodesWithNonHostScopedAntiAffinityPods is kube's snapshot list
// HavePodsWithRequiredNonHostScopedAntiAffinityList, derived from the nodes
// with required anti-affinity pods.
func nodesWithNonHostScopedAntiAffinityPods(nodes []*schedcore.NodeInfo) []*schedcore.NodeInfo {
	out := make([]*schedcore.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		for _, p := range n.PodsWithRequiredAntiAffinity {
			if hasNonHostScopedRequiredAntiAffinity(p.Pod) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// PreFilter computes the counts Filter reads. See the package doc for Skip.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, allNodes []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	pi, err := newIncomingPodInfo(pod)
	if err != nil {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", err))
	}
	snap := pl.handle.Snapshot()
	for i := range pi.RequiredAffinityTerms {
		mergeNamespaces(&pi.RequiredAffinityTerms[i], snap)
	}
	for i := range pi.RequiredAntiAffinityTerms {
		mergeNamespaces(&pi.RequiredAntiAffinityTerms[i], snap)
	}
	s := &preFilterState{podInfo: pi, namespaceLabels: snap.NamespaceLabels(pod.Namespace), fastPath: pl.fastPath}
	s.classifyTerms()

	antiNodes := snap.HavePodsWithRequiredAntiAffinityList()
	mustEvaluateHostScoped := false
	// The dense form needs allNodes to be the snapshot's list.
	var listSnap *schedcore.Snapshot
	if snap.IsList(allNodes) {
		listSnap = snap
	}
	var affD, antiD denseKeys
	if pl.fastPath {
		nonHost := nodesWithNonHostScopedAntiAffinityPods(antiNodes)
		var hostScopedOnNonHostNodes bool
		s.existingAntiAffinityCounts, hostScopedOnNonHostNodes = pl.existingAntiAffinityCounts(ctx, pod, s.namespaceLabels, nonHost)
		mustEvaluateHostScoped = hostScopedOnNonHostNodes || len(antiNodes) > len(nonHost)
		s.affinityCounts, s.antiAffinityCounts, affD, antiD = pl.incomingCountsDense(ctx, s.clusterWideAffinityTerms, s.clusterWideAntiAffinityTerms, allNodes, listSnap)
		if len(s.hostScopedAffinityTerms) > 0 {
			s.matchingHostScopedAffinityPods = pl.countMatchingHostScopedAffinityPods(ctx, allNodes, s.hostScopedAffinityTerms)
		}
	} else {
		s.existingAntiAffinityCounts, _ = pl.existingAntiAffinityCounts(ctx, pod, s.namespaceLabels, antiNodes)
		s.affinityCounts, s.antiAffinityCounts, affD, antiD = pl.incomingCountsDense(ctx, s.clusterWideAffinityTerms, s.clusterWideAntiAffinityTerms, allNodes, listSnap)
	}

	noTerms := len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0
	if len(s.existingAntiAffinityCounts) == 0 && noTerms && !mustEvaluateHostScoped {
		return nil, schedcore.NewStatus(schedcore.Skip)
	}
	if listSnap != nil {
		s.initDense(snap, affD, antiD)
	}
	cycleState.Write(preFilterStateKey, s)
	return nil, nil
}

// AddPod adds a pod to the cycle's counts (nominated pods, preemption).
func (pl *InterPodAffinity) AddPod(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, podInfoToAdd *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd, nodeInfo.Node(), 1)
	return nil
}

// RemovePod removes a pod from the cycle's counts (preemption victims).
func (pl *InterPodAffinity) RemovePod(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, podInfoToRemove *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove, nodeInfo.Node(), -1)
	return nil
}

func getPreFilterState(cycleState *schedcore.CycleState) (*preFilterState, error) {
	c, err := cycleState.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.state error", c)
	}
	return s, nil
}

// satisfyExistingPodsAntiAffinity reports whether no existing pod's required
// anti-affinity rejects the pod on this node.
func satisfyExistingPodsAntiAffinity(s *preFilterState, nodeInfo *schedcore.NodeInfo, idx int) bool {
	node := nodeInfo.Node()
	if len(s.existingAntiAffinityCounts) > 0 && idx >= 0 {
		// Only the keys with counts can match a node label.
		d := &s.dense.existing
		for i := range d.cols {
			if n, ok := d.at(i, idx); ok && n > 0 {
				return false
			}
		}
	} else if len(s.existingAntiAffinityCounts) > 0 {
		for k, v := range node.Labels {
			if s.existingAntiAffinityCounts[topologyPair{key: k, value: v}] > 0 {
				return false
			}
		}
	}
	if s.fastPath {
		if _, ok := node.Labels[v1.LabelHostname]; ok {
			for _, existing := range nodeInfo.PodsWithRequiredAntiAffinity {
				for i := range existing.RequiredAntiAffinityTerms {
					t := &existing.RequiredAntiAffinityTerms[i]
					if t.TopologyKey == v1.LabelHostname && t.Matches(s.podInfo.Pod, s.namespaceLabels) {
						return false
					}
				}
			}
		}
	}
	return true
}

// nodeTopologyConflictsWithAntiAffinity reports whether the node's domain of
// a cluster-wide anti-affinity term holds a pod the term matches.
func nodeTopologyConflictsWithAntiAffinity(s *preFilterState, node *v1.Node, idx int) bool {
	if len(s.antiAffinityCounts) > 0 && idx >= 0 {
		d := &s.dense.anti
		for i := range d.cols {
			if n, ok := d.at(i, idx); ok && n > 0 {
				return true
			}
		}
		return false
	}
	if len(s.antiAffinityCounts) > 0 {
		for i := range s.clusterWideAntiAffinityTerms {
			key := s.clusterWideAntiAffinityTerms[i].TopologyKey
			if tv, ok := node.Labels[key]; ok && s.antiAffinityCounts[topologyPair{key: key, value: tv}] > 0 {
				return true
			}
		}
	}
	return false
}

// nodePodsConflictWithAntiAffinity checks the host-scoped anti-affinity
// terms against the node's pods (gate on).
func nodePodsConflictWithAntiAffinity(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	if len(s.hostScopedAntiAffinityTerms) == 0 {
		return false
	}
	if _, ok := nodeInfo.Node().Labels[v1.LabelHostname]; !ok {
		return false
	}
	for _, existing := range nodeInfo.Pods {
		for i := range s.hostScopedAntiAffinityTerms {
			if s.hostScopedAntiAffinityTerms[i].Matches(existing.Pod, nil) {
				return true
			}
		}
	}
	return false
}

// nodePodsSatisfyAffinity checks host-scoped-only affinity against the node's
// pods, falling back to the first-pod exception (gate on).
func nodePodsSatisfyAffinity(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	if len(s.hostScopedAffinityTerms) == 0 {
		return true
	}
	if _, ok := nodeInfo.Node().Labels[v1.LabelHostname]; !ok {
		return false
	}
	for _, existing := range nodeInfo.Pods {
		if podMatchesAllAffinityTerms(s.hostScopedAffinityTerms, existing.Pod) {
			return true
		}
	}
	return satisfiesSelfAffinity(s, nodeInfo.Node())
}

// nodeTopologyMatchesAffinity reports whether every affinity topology key is
// on the node and each of its domains holds a pod matching all the terms; or,
// when no pod matches anywhere, whether the pod matches its own terms (the
// first pod of a group with affinity to itself).
func nodeTopologyMatchesAffinity(s *preFilterState, node *v1.Node, idx int) bool {
	if len(s.clusterWideAffinityTerms) == 0 {
		return true
	}
	podsExist := true
	if idx >= 0 && len(s.dense.affinity.cols) > 0 {
		aff := &s.dense.affinity
		for i := range aff.cols {
			n, ok := aff.at(i, idx)
			if !ok {
				return false
			}
			if n <= 0 {
				podsExist = false
			}
		}
		if !podsExist {
			return len(s.affinityCounts) == 0 && satisfiesSelfAffinity(s, node)
		}
		return true
	}
	for i := range s.clusterWideAffinityTerms {
		key := s.clusterWideAffinityTerms[i].TopologyKey
		tv, ok := node.Labels[key]
		if !ok {
			// Every topology label must be on the node, self-affinity included.
			return false
		}
		if s.affinityCounts[topologyPair{key: key, value: tv}] <= 0 {
			podsExist = false
		}
	}
	if !podsExist {
		return len(s.affinityCounts) == 0 && satisfiesSelfAffinity(s, node)
	}
	return true
}

// satisfiesSelfAffinity is kube's satisfiesSelfAffinityCheck.
func satisfiesSelfAffinity(s *preFilterState, node *v1.Node) bool {
	terms := s.podInfo.RequiredAffinityTerms
	if s.fastPath {
		if s.matchingHostScopedAffinityPods <= 0 && podMatchesAllAffinityTerms(terms, s.podInfo.Pod) {
			for i := range terms {
				if _, ok := node.Labels[terms[i].TopologyKey]; !ok {
					return false
				}
			}
			return true
		}
		return false
	}
	return podMatchesAllAffinityTerms(terms, s.podInfo.Pod)
}

// Filter checks, in kube's order, the pod's required affinity, its required
// anti-affinity and the existing pods' required anti-affinity on the node.
func (pl *InterPodAffinity) Filter(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	node := nodeInfo.Node()
	idx := s.denseIndex(nodeInfo)
	if len(s.hostScopedAffinityTerms) > 0 {
		if !nodePodsSatisfyAffinity(s, nodeInfo) {
			return statusAffinityRulesNotMatch
		}
	} else if !nodeTopologyMatchesAffinity(s, node, idx) {
		return statusAffinityRulesNotMatch
	}
	if nodeTopologyConflictsWithAntiAffinity(s, node, idx) || nodePodsConflictWithAntiAffinity(s, nodeInfo) {
		return statusAntiAffinityRulesNotMatch
	}
	if !satisfyExistingPodsAntiAffinity(s, nodeInfo, idx) {
		return statusExistingAntiAffinityRulesNotMatch
	}
	return nil
}

// The Filter rejections, shared by every call (see schedcore.NewSharedStatus).
var (
	statusAffinityRulesNotMatch             = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	statusAntiAffinityRulesNotMatch         = schedcore.NewSharedStatus(schedcore.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	statusExistingAntiAffinityRulesNotMatch = schedcore.NewSharedStatus(schedcore.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
)
