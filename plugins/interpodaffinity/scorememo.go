package interpodaffinity

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// PreScore's result for a pod is a sum over nodes of what each node's pods
// contribute to topology domains, and that contribution depends only on the
// node's pods and on the incoming pod's labels, namespace and preferred
// terms. scoreMemo keeps, per incoming-pod signature, every node's
// contribution (valid while the node's generation is unchanged) and their
// running sum, so a cycle recomputes only the nodes that changed since the
// signature was last scored, instead of matching every pod of every node.

// contrib is one topology pair's summed weight from one node, with the
// number of matched terms behind it (a pair is present, even at weight 0,
// whenever some term matched, as in kube's map).
type contrib struct {
	key, value string
	score      int64
}

type nodeContrib struct {
	gen int64
	c   []contrib
}

type pairTotal struct {
	score int64
	refs  int
}

type sigScores struct {
	mu    sync.Mutex
	used  uint64
	nodes []nodeContrib
	total map[string]map[string]*pairTotal
	pairs int
}

type scoreMemo struct {
	mu    sync.Mutex
	sigs  map[string]*sigScores
	clock uint64
	max   int
}

func newScoreMemo(max int) *scoreMemo {
	return &scoreMemo{sigs: map[string]*sigScores{}, max: max}
}

// acquire returns key's entry, locked.
func (m *scoreMemo) acquire(key string) *sigScores {
	m.mu.Lock()
	s := m.sigs[key]
	if s == nil {
		if len(m.sigs) >= m.max {
			var oldest string
			first := true
			var at uint64
			for k, v := range m.sigs {
				if first || v.used < at {
					oldest, at, first = k, v.used, false
				}
			}
			delete(m.sigs, oldest)
		}
		s = &sigScores{total: map[string]map[string]*pairTotal{}}
		m.sigs[key] = s
	}
	m.clock++
	s.used = m.clock
	m.mu.Unlock()
	s.mu.Lock()
	return s
}

func (s *sigScores) release() { s.mu.Unlock() }

func (s *sigScores) apply(cs []contrib, sign int64) {
	for _, c := range cs {
		byValue := s.total[c.key]
		if byValue == nil {
			byValue = map[string]*pairTotal{}
			s.total[c.key] = byValue
		}
		p := byValue[c.value]
		if p == nil {
			p = &pairTotal{}
			byValue[c.value] = p
			s.pairs++
		}
		p.score += sign * c.score
		p.refs += int(sign)
		if p.refs == 0 {
			delete(byValue, c.value)
			s.pairs--
			if len(byValue) == 0 {
				delete(s.total, c.key)
			}
		}
	}
}

// update brings the sums up to date with nodes, computing the contribution
// of each node whose generation changed with compute (in parallel through
// until), and returns the stale count for tests.
func (s *sigScores) update(nodes []*schedcore.NodeInfo, until func(n int, f func(i int)), compute func(ni *schedcore.NodeInfo) []contrib) int {
	for i := len(nodes); i < len(s.nodes); i++ {
		s.apply(s.nodes[i].c, -1)
	}
	if len(s.nodes) > len(nodes) {
		s.nodes = s.nodes[:len(nodes)]
	}
	for len(s.nodes) < len(nodes) {
		s.nodes = append(s.nodes, nodeContrib{})
	}
	var stale []int
	for i, ni := range nodes {
		if g := s.nodes[i].gen; g == 0 || g != ni.Generation {
			stale = append(stale, i)
		}
	}
	if len(stale) == 0 {
		return 0
	}
	fresh := make([][]contrib, len(stale))
	until(len(stale), func(j int) { fresh[j] = compute(nodes[stale[j]]) })
	for j, i := range stale {
		s.apply(s.nodes[i].c, -1)
		s.nodes[i] = nodeContrib{gen: nodes[i].Generation, c: fresh[j]}
		s.apply(fresh[j], 1)
	}
	return len(stale)
}

// scores copies the sums into a scoreMap for the cycle state.
func (s *sigScores) scores() scoreMap {
	m := make(scoreMap, len(s.total))
	for k, byValue := range s.total {
		vs := make(map[string]int64, len(byValue))
		for v, p := range byValue {
			vs[v] = p.score
		}
		m[k] = vs
	}
	return m
}

// contribs is one node's contributions while they are computed.
type contribs []contrib

// add sums weight into the pair (key, value).
func (cs *contribs) add(key, value string, weight int64) {
	for i := range *cs {
		if c := &(*cs)[i]; c.key == key && c.value == value {
			c.score += weight
			return
		}
	}
	*cs = append(*cs, contrib{key: key, value: value, score: weight})
}

// preScoreSignature identifies everything of the incoming pod that a node's
// contribution depends on: namespace (and the namespaces' generation, for
// namespace selectors), labels, whether all pods or only those with
// affinity are scanned, and the pod's inter-pod affinity terms.
func preScoreSignature(pod *v1.Pod, allPods bool, nsGen int64) (string, error) {
	var b strings.Builder
	b.WriteString(pod.Namespace)
	b.WriteByte(0)
	b.WriteString(strconv.FormatInt(nsGen, 10))
	if allPods {
		b.WriteString("+all")
	}
	b.WriteByte(0)
	keys := make([]string, 0, len(pod.Labels))
	for k := range pod.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(pod.Labels[k])
		b.WriteByte(0)
	}
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			raw, err := a.PodAffinity.Marshal()
			if err != nil {
				return "", err
			}
			b.WriteString("\x01" + strconv.Itoa(len(raw)) + ":")
			b.Write(raw)
		}
		if a.PodAntiAffinity != nil {
			raw, err := a.PodAntiAffinity.Marshal()
			if err != nil {
				return "", err
			}
			b.WriteString("\x02" + strconv.Itoa(len(raw)) + ":")
			b.Write(raw)
		}
	}
	return b.String(), nil
}
