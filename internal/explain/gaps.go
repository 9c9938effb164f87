package explain

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/plugins/interpodaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	nodeaffinityplugin "github.com/kubectl-sched/kubectl-sched/plugins/nodeaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/podtopologyspread"
	"github.com/kubectl-sched/kubectl-sched/plugins/volumezone"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// gapper works out, for a rejected node, the concrete reason behind each
// failing filter: the resource shortfall, the untolerated taint, the label
// that does not match, the pod holding the port, the skew, the conflicting
// pod. It reads the cycle's snapshot only; the plugins stay as they are
// (their verdicts are the ground truth, this only puts them in words).
type gapper struct {
	pod      *v1.Pod
	podInfo  *schedcore.PodInfo
	snap     *schedcore.Snapshot
	fw       *schedcore.Framework
	features schedcore.Features
	// spread is computed on first use: matching pods per domain.
	spread []spreadCount
}

func newGapper(pod *v1.Pod, snap *schedcore.Snapshot, fw *schedcore.Framework, f schedcore.Features) *gapper {
	return &gapper{pod: pod, podInfo: schedcore.NewPodInfo(pod), snap: snap, fw: fw, features: f}
}

// nodeGaps says what stands in the way on a rejected node: the pods
// nominated to it that the filters counted, then each failing plugin's
// explanation (its own, from the cycle state its Filter read), in filter
// order; a plugin without one is explained by its reason.
func (g *gapper) nodeGaps(ni *schedcore.NodeInfo, ne *schedcore.NodeExplanation) []report.Gap {
	if ne == nil {
		return nil
	}
	var out []report.Gap
	if len(ne.Nominated) > 0 {
		names := make([]string, len(ne.Nominated))
		withNominated := ni.Clone()
		for i, pi := range ne.Nominated {
			names[i] = fmt.Sprintf("%s (priority %d)", schedcore.PodName(pi.Pod), schedcore.PodPriority(pi.Pod))
			withNominated.AddPodInfo(pi, g.features)
		}
		ni = withNominated
		out = append(out, report.Gap{Gap: "preemption nominated this node for " + strings.Join(names, ", ") + ": the filters count them as running here"})
	}
	for _, v := range ne.Failures {
		out = append(out, g.verdictGaps(ni, v, "")...)
	}
	for _, v := range ne.LeftOutBy {
		out = append(out, g.verdictGaps(ni, v, fmt.Sprintf("node is not among the nodes %s's PreFilter allows", v.Plugin))...)
	}
	if len(ne.Failures) == 0 && len(ne.LeftOutBy) == 0 && ne.Status != nil {
		out = append(out, report.Gap{Plugin: ne.Status.Plugin(), Gap: ne.Status.Message()})
	}
	return out
}

// verdictGaps renders one plugin's verdict: its explanation's gaps, or
// fallback (the reason when "") when it has none.
func (g *gapper) verdictGaps(ni *schedcore.NodeInfo, v schedcore.FilterVerdict, fallback string) []report.Gap {
	if v.Explanation != nil && len(v.Explanation.Gaps) > 0 {
		out := make([]report.Gap, len(v.Explanation.Gaps))
		for i, gp := range v.Explanation.Gaps {
			out[i] = report.Gap{Plugin: v.Plugin, Gap: gp.Text, Details: gp.Details}
		}
		return out
	}
	reason := strings.Join(v.Status.Reasons(), "; ")
	texts := g.pluginGaps(ni, v.Plugin, reason, fallback != "")
	if len(texts) == 0 {
		texts = []string{fallback}
		if fallback == "" {
			texts = []string{reason}
		}
	}
	out := make([]report.Gap, len(texts))
	for i, t := range texts {
		out[i] = report.Gap{Plugin: v.Plugin, Gap: t}
	}
	return out
}

// pluginGaps re-derives, for the plugins that do not explain themselves
// yet, what their Filter rejected.
func (g *gapper) pluginGaps(ni *schedcore.NodeInfo, plugin, reason string, leftOut bool) []string {
	if leftOut {
		if plugin == names.NodeAffinity {
			return g.nodeAffinityGaps(ni.Node(), "")
		}
		return nil
	}
	var texts []string
	switch plugin {
	case names.NodeName:
		texts = []string{fmt.Sprintf("the pod asks for node %q (spec.nodeName)", g.pod.Spec.NodeName)}
	case names.NodeUnschedulable:
		texts = []string{"node is cordoned (spec.unschedulable); uncordon it or tolerate node.kubernetes.io/unschedulable:NoSchedule"}
	case names.NodeAffinity:
		texts = g.nodeAffinityGaps(ni.Node(), reason)
	case names.NodePorts:
		texts = g.portGaps(ni)
	case names.PodTopologySpread:
		texts = g.spreadGaps(ni.Node())
	case names.InterPodAffinity:
		texts = g.interPodGaps(ni.Node(), reason)
	case names.VolumeBinding:
		texts = g.volumeBindingGaps(ni)
	case names.VolumeZone:
		if reason == volumezone.ErrReasonConflict {
			texts = g.volumeZoneGaps(ni.Node())
		}
	case names.NodeVolumeLimits:
		texts = g.volumeLimitGaps(ni)
	case names.VolumeRestrictions:
		texts = g.volumeRestrictionGaps(ni, reason)
	}
	return texts
}

// nodeAffinityGaps names the nodeSelector labels and the required node
// affinity terms the node does not match (terms are ORed: each term's
// first failing requirement is listed).
func (g *gapper) nodeAffinityGaps(node *v1.Node, reason string) []string {
	if reason == nodeaffinityplugin.ErrReasonEnforced {
		return []string{"node does not match the scheduler-enforced node affinity (NodeAffinity args.addedAffinity)"}
	}
	var out []string
	keys := make([]string, 0, len(g.pod.Spec.NodeSelector))
	for k := range g.pod.Spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want := g.pod.Spec.NodeSelector[k]
		if have, ok := node.Labels[k]; !ok {
			out = append(out, fmt.Sprintf("node selector: label %s=%s wanted, node has no %s label", k, want, k))
		} else if have != want {
			out = append(out, fmt.Sprintf("node selector: label %s=%s wanted, node has %s=%s", k, want, k, have))
		}
	}
	a := g.pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return out
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var termGaps []string
	for i := range terms {
		gap := termGap(&terms[i], node)
		if gap == "" {
			return out // a term matches: the selector is what fails
		}
		termGaps = append(termGaps, fmt.Sprintf("node affinity term %d: %s", i+1, gap))
	}
	if len(terms) == 0 {
		termGaps = []string{"node affinity: required terms are empty and match no node"}
	}
	return append(out, termGaps...)
}

// termGap describes the first requirement of a node selector term the node
// fails, "" when the term matches.
func termGap(t *v1.NodeSelectorTerm, node *v1.Node) string {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return "the term is empty and matches no node"
	}
	for _, r := range t.MatchExpressions {
		if gap := requirementGap(r, node.Labels); gap != "" {
			return gap
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != metav1.ObjectNameField {
			return fmt.Sprintf("field %s is not supported (only %s)", r.Key, metav1.ObjectNameField)
		}
		if len(r.Values) != 1 {
			// A field selector takes exactly one value; kube-scheduler
			// treats anything else as matching no node.
			return fmt.Sprintf("matchFields %s %s must have exactly one value, has %d, and matches no node", r.Key, r.Operator, len(r.Values))
		}
		in := contains(r.Values, node.Name)
		switch {
		case r.Operator == v1.NodeSelectorOpIn && !in:
			return fmt.Sprintf("node name %s wanted, node is %s", r.Values[0], node.Name)
		case r.Operator == v1.NodeSelectorOpNotIn && in:
			return fmt.Sprintf("any node but %s wanted", r.Values[0])
		}
	}
	return ""
}

func requirementGap(r v1.NodeSelectorRequirement, nodeLabels map[string]string) string {
	have, ok := nodeLabels[r.Key]
	has := fmt.Sprintf("node has %s=%s", r.Key, have)
	if !ok {
		has = fmt.Sprintf("node has no %s label", r.Key)
	}
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		if ok && contains(r.Values, have) {
			return ""
		}
		if len(r.Values) == 1 {
			return fmt.Sprintf("label %s=%s wanted, %s", r.Key, r.Values[0], has)
		}
		return fmt.Sprintf("label %s in (%s) wanted, %s", r.Key, strings.Join(r.Values, ", "), has)
	case v1.NodeSelectorOpNotIn:
		if !ok || !contains(r.Values, have) {
			return ""
		}
		return fmt.Sprintf("label %s not in (%s) wanted, %s", r.Key, strings.Join(r.Values, ", "), has)
	case v1.NodeSelectorOpExists:
		if ok {
			return ""
		}
		return fmt.Sprintf("label %s wanted, %s", r.Key, has)
	case v1.NodeSelectorOpDoesNotExist:
		if !ok {
			return ""
		}
		return fmt.Sprintf("label %s must be absent, %s", r.Key, has)
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		op := ">"
		if r.Operator == v1.NodeSelectorOpLt {
			op = "<"
		}
		if len(r.Values) != 1 {
			return fmt.Sprintf("label %s %s: needs exactly one value", r.Key, op)
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return fmt.Sprintf("label %s %s %s: not an integer", r.Key, op, r.Values[0])
		}
		if ok {
			if v, err := strconv.ParseInt(have, 10, 64); err == nil && (op == ">" && v > want || op == "<" && v < want) {
				return ""
			}
		}
		return fmt.Sprintf("label %s %s %d wanted, %s", r.Key, op, want, has)
	}
	return fmt.Sprintf("unknown operator %q on label %s", r.Operator, r.Key)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// portGaps names each wanted host port in use and the pods using it.
func (g *gapper) portGaps(ni *schedcore.NodeInfo) []string {
	var out []string
	for _, cp := range schedcore.HostPorts(g.pod) {
		proto := string(cp.Protocol)
		if proto == "" {
			proto = string(v1.ProtocolTCP)
		}
		if !ni.UsedPorts.CheckConflict(cp.HostIP, proto, cp.HostPort) {
			continue
		}
		var owners []string
		for _, pi := range ni.Pods {
			used := schedcore.HostPortInfo{}
			for _, p := range schedcore.HostPorts(pi.Pod) {
				used.Add(p.HostIP, string(p.Protocol), p.HostPort)
			}
			if used.CheckConflict(cp.HostIP, proto, cp.HostPort) {
				owners = append(owners, schedcore.PodName(pi.Pod))
			}
		}
		port := fmt.Sprintf("host port %d/%s", cp.HostPort, proto)
		if cp.HostIP != "" && cp.HostIP != schedcore.DefaultBindAllHostIP {
			port = fmt.Sprintf("host port %s:%d/%s", cp.HostIP, cp.HostPort, proto)
		}
		if len(owners) == 0 {
			out = append(out, port+" in use")
		} else {
			out = append(out, fmt.Sprintf("%s in use by %s", port, strings.Join(owners, ", ")))
		}
	}
	return out
}

// spreadCount is one hard topology spread constraint of the pod with the
// matching pods per domain, counted as PodTopologySpread's PreFilter does.
type spreadCount struct {
	c         v1.TopologySpreadConstraint
	selector  labels.Selector
	self      int
	counts    map[string]int
	minDomain int
}

// spreadCounts counts, over every node that has all the constraints'
// topology keys and passes the node inclusion policies, the pods in the
// pod's namespace that each DoNotSchedule constraint selects, per domain.
func (g *gapper) spreadCounts() []spreadCount {
	if g.spread != nil {
		return g.spread
	}
	g.spread = []spreadCount{}
	var cs []spreadCount
	for _, c := range g.pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != v1.DoNotSchedule {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			continue
		}
		if len(c.MatchLabelKeys) > 0 && c.LabelSelector != nil {
			// MatchLabelKeysInPodTopologySpread: the pod's values of the keys
			// are ANDed into the selector.
			for _, k := range c.MatchLabelKeys {
				if v, ok := g.pod.Labels[k]; ok {
					if r, err := labels.NewRequirement(k, "=", []string{v}); err == nil {
						sel = sel.Add(*r)
					}
				}
			}
		}
		sc := spreadCount{c: c, selector: sel, counts: map[string]int{}}
		if sel.Matches(labels.Set(g.pod.Labels)) {
			sc.self = 1
		}
		cs = append(cs, sc)
	}
	if len(cs) == 0 {
		return g.spread
	}
	required := nodeaffinity.GetRequiredNodeAffinity(g.pod)
	for _, ni := range g.snap.List() {
		node := ni.Node()
		hasAll := true
		for i := range cs {
			if _, ok := node.Labels[cs[i].c.TopologyKey]; !ok {
				hasAll = false
			}
		}
		if !hasAll {
			continue
		}
		for i := range cs {
			c := &cs[i]
			if ptr.Deref(c.c.NodeAffinityPolicy, v1.NodeInclusionPolicyHonor) == v1.NodeInclusionPolicyHonor {
				if ok, _ := required.Match(node); !ok {
					continue
				}
			}
			if ptr.Deref(c.c.NodeTaintsPolicy, v1.NodeInclusionPolicyIgnore) == v1.NodeInclusionPolicyHonor {
				if _, untolerated := v1helper.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, g.pod.Spec.Tolerations, func(t *v1.Taint) bool {
					return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
				}, false); untolerated {
					continue
				}
			}
			n := 0
			if !c.selector.Empty() {
				for _, pi := range ni.Pods {
					p := pi.Pod
					if p.DeletionTimestamp == nil && p.Namespace == g.pod.Namespace && c.selector.Matches(labels.Set(p.Labels)) {
						n++
					}
				}
			}
			c.counts[node.Labels[c.c.TopologyKey]] += n
		}
	}
	for i := range cs {
		c := &cs[i]
		first := true
		for _, n := range c.counts {
			if first || n < c.minDomain {
				c.minDomain, first = n, false
			}
		}
		if len(c.counts) < int(ptr.Deref(c.c.MinDomains, 1)) {
			c.minDomain = 0
		}
	}
	g.spread = cs
	return cs
}

// spreadGaps gives, per violated constraint, the skew the pod would cause.
func (g *gapper) spreadGaps(node *v1.Node) []string {
	cs := g.spreadCounts()
	if len(cs) == 0 {
		return []string{"the scheduler configuration's default topology spread constraints are not satisfied"}
	}
	var out []string
	for i := range cs {
		c := &cs[i]
		key := c.c.TopologyKey
		dom := domainWord(key)
		tv, ok := node.Labels[key]
		if !ok {
			out = append(out, fmt.Sprintf("node has no %s label (topology spread constraint %d's topologyKey); %s", key, i+1, podtopologyspread.ErrReasonNodeLabelNotMatch))
			continue
		}
		skew := c.counts[tv] + c.self - c.minDomain
		if skew > int(c.c.MaxSkew) {
			out = append(out, fmt.Sprintf("%s skew would be %d > maxSkew %d (%s %s has %d matching pods, the emptiest %d)",
				dom, skew, c.c.MaxSkew, dom, tv, c.counts[tv], c.minDomain))
		}
	}
	return out
}

// domainWord is a short name for a topology key in messages.
func domainWord(key string) string {
	switch key {
	case v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone:
		return "zone"
	case v1.LabelTopologyRegion, v1.LabelFailureDomainBetaRegion:
		return "region"
	case v1.LabelHostname:
		return "hostname"
	}
	return key
}

// where says where a domain is: "on this node" for the node's own hostname
// domain, "in zone zone-b" otherwise.
func where(key, value string, sameNode bool) string {
	if key == v1.LabelHostname && sameNode {
		return "on this node"
	}
	return fmt.Sprintf("in %s %s", domainWord(key), value)
}

// interPodGaps names the pods behind an inter-pod (anti-)affinity failure.
func (g *gapper) interPodGaps(node *v1.Node, reason string) []string {
	const maxPods = 3
	var out []string
	switch reason {
	case interpodaffinity.ErrReasonAffinityRulesNotMatch:
		for i := range g.podInfo.RequiredAffinityTerms {
			t := &g.podInfo.RequiredAffinityTerms[i]
			tv, ok := node.Labels[t.TopologyKey]
			if !ok {
				out = append(out, fmt.Sprintf("pod affinity term %d: node has no %s label", i+1, t.TopologyKey))
				continue
			}
			if len(g.podsInDomain(node, t.TopologyKey, tv, func(p *v1.Pod) bool { return t.Matches(p, g.snap.NamespaceLabels(p.Namespace)) }, 1)) == 0 {
				out = append(out, fmt.Sprintf("pod affinity term %d: no pod matching %s %s", i+1, selectorString(t.Selector), where(t.TopologyKey, tv, false)))
			}
		}
	case interpodaffinity.ErrReasonAntiAffinityRulesNotMatch:
		for i := range g.podInfo.RequiredAntiAffinityTerms {
			t := &g.podInfo.RequiredAntiAffinityTerms[i]
			tv, ok := node.Labels[t.TopologyKey]
			if !ok {
				continue
			}
			for _, m := range g.podsInDomain(node, t.TopologyKey, tv, func(p *v1.Pod) bool { return t.Matches(p, g.snap.NamespaceLabels(p.Namespace)) }, maxPods) {
				out = append(out, fmt.Sprintf("anti-affinity with pod %s %s", m.pod, m.where(node.Name, t.TopologyKey, tv)))
			}
		}
	case interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch:
		nsLabels := g.snap.NamespaceLabels(g.pod.Namespace)
		for _, ni := range g.snap.HavePodsWithRequiredAntiAffinityList() {
			for _, pi := range ni.PodsWithRequiredAntiAffinity {
				for i := range pi.RequiredAntiAffinityTerms {
					t := &pi.RequiredAntiAffinityTerms[i]
					tv, ok := ni.Node().Labels[t.TopologyKey]
					if !ok || node.Labels[t.TopologyKey] != tv || !t.Matches(g.pod, nsLabels) {
						continue
					}
					m := domainPod{pod: schedcore.PodName(pi.Pod), node: ni.Name()}
					if len(out) < maxPods {
						out = append(out, fmt.Sprintf("pod %s %s has anti-affinity to this pod", m.pod, m.where(node.Name, t.TopologyKey, tv)))
					}
				}
			}
		}
	}
	return out
}

type domainPod struct{ pod, node string }

func (d domainPod) where(thisNode, key, value string) string {
	if d.node == thisNode {
		return "on this node"
	}
	return fmt.Sprintf("%s (on node %s)", where(key, value, false), d.node)
}

// podsInDomain returns up to limit pods on nodes with label key=value that
// match, the pods of node first.
func (g *gapper) podsInDomain(node *v1.Node, key, value string, match func(*v1.Pod) bool, limit int) []domainPod {
	var out []domainPod
	add := func(ni *schedcore.NodeInfo) bool {
		for _, pi := range ni.Pods {
			if match(pi.Pod) {
				out = append(out, domainPod{pod: schedcore.PodName(pi.Pod), node: ni.Name()})
				if len(out) >= limit {
					return true
				}
			}
		}
		return false
	}
	if ni, err := g.snap.Get(node.Name); err == nil && add(ni) {
		return out
	}
	for _, ni := range g.snap.List() {
		if ni.Name() == node.Name {
			continue
		}
		if v, ok := ni.Node().Labels[key]; !ok || v != value {
			continue
		}
		if add(ni) {
			return out
		}
	}
	return out
}

func selectorString(s labels.Selector) string {
	if s == nil || s.Empty() {
		return "any labels"
	}
	return s.String()
}
