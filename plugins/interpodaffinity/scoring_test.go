package interpodaffinity

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func weighted(w int32, topologyKey string, sel *metav1.LabelSelector) v1.WeightedPodAffinityTerm {
	return v1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: topologyKey}}
}

func exprs(reqs ...metav1.LabelSelectorRequirement) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: reqs}
}

func req(key string, op metav1.LabelSelectorOperator, vals ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: vals}
}

func preferred(terms ...v1.WeightedPodAffinityTerm) *v1.Affinity {
	return &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
}

func preferredAnti(terms ...v1.WeightedPodAffinityTerm) *v1.Affinity {
	return &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
}

type scoreCase struct {
	name          string
	pod           *v1.Pod
	pods          []*v1.Pod
	nodes         []*v1.Node
	args          *configv1.InterPodAffinityArgs
	want          schedcore.NodeScoreList
	wantPreScore  schedcore.Code
	wantErrSubstr string
}

func runScoreCase(t *testing.T, tt scoreCase) {
	t.Helper()
	ctx := context.Background()
	snap := newSnapshot(tt.pods, tt.nodes, testNamespaces)
	p := newPlugin(t, tt.args, snap, false)
	cs := schedcore.NewCycleState()
	s := p.PreScore(ctx, cs, tt.pod, snap.List())
	if s.Code() != tt.wantPreScore {
		t.Fatalf("PreScore code = %v (%s), want %v", s.Code(), s.Message(), tt.wantPreScore)
	}
	if !strings.Contains(s.Message(), tt.wantErrSubstr) {
		t.Fatalf("PreScore message %q does not contain %q", s.Message(), tt.wantErrSubstr)
	}
	if !s.IsSuccess() {
		return
	}
	var got schedcore.NodeScoreList
	for _, n := range tt.nodes {
		ni, err := snap.Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		score, s := p.Score(ctx, cs, tt.pod, ni)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s.Message())
		}
		// A NodeInfo outside the snapshot list takes the score maps
		// instead of the label columns: the same raw score.
		outside := schedcore.NewNodeInfo()
		outside.SetNode(ni.Node())
		if again, _ := p.Score(ctx, cs, tt.pod, outside); again != score {
			t.Errorf("Score(%s) = %d from the label columns, %d from the maps", n.Name, score, again)
		}
		got = append(got, schedcore.NodeScore{Name: n.Name, Score: score})
	}
	// NormalizeScore is NormalizeColumn, which the framework calls.
	if s := plugintest.Normalize(ctx, p, cs, tt.pod, got); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s.Message())
	}
	if diff := cmp.Diff(tt.want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func scores(kv ...any) schedcore.NodeScoreList {
	var l schedcore.NodeScoreList
	for i := 0; i+1 < len(kv); i += 2 {
		l = append(l, schedcore.NodeScore{Name: kv[i].(string), Score: int64(kv[i+1].(int))})
	}
	return l
}

// Ported from kube's TestPreferredAffinity.
func TestPreferredAffinity(t *testing.T) {
	const max = 100
	labelRgChina := map[string]string{"region": "China"}
	labelRgIndia := map[string]string{"region": "India"}
	labelAzAz1 := map[string]string{"az": "az1"}
	labelAzAz2 := map[string]string{"az": "az2"}
	labelRgChinaAzAz1 := map[string]string{"region": "China", "az": "az1"}
	s1 := map[string]string{"security": "S1"}
	s2 := map[string]string{"security": "S2"}

	stayWithS1InRegion := preferred(weighted(5, "region", exprs(req("security", metav1.LabelSelectorOpIn, "S1"))))
	stayWithS2InRegion := preferred(weighted(6, "region", exprs(req("security", metav1.LabelSelectorOpIn, "S2"))))
	affinity3 := preferred(
		weighted(8, "region", exprs(req("security", metav1.LabelSelectorOpNotIn, "S1"), req("security", metav1.LabelSelectorOpIn, "S2"))),
		weighted(2, "region", exprs(req("security", metav1.LabelSelectorOpExists), req("wrongkey", metav1.LabelSelectorOpDoesNotExist))),
	)
	hardAffinity := &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		{LabelSelector: exprs(req("security", metav1.LabelSelectorOpIn, "S1", "value2")), TopologyKey: "region"},
		{LabelSelector: exprs(req("security", metav1.LabelSelectorOpExists), req("wrongkey", metav1.LabelSelectorOpDoesNotExist)), TopologyKey: "region"},
	}}}
	awayFromS1InAz := preferredAnti(weighted(5, "az", exprs(req("security", metav1.LabelSelectorOpIn, "S1"))))
	awayFromS2InAz := preferredAnti(weighted(5, "az", exprs(req("security", metav1.LabelSelectorOpIn, "S2"))))
	stayWithS1InRegionAwayFromS2InAz := &v1.Affinity{
		PodAffinity:     preferred(weighted(8, "region", exprs(req("security", metav1.LabelSelectorOpIn, "S1")))).PodAffinity,
		PodAntiAffinity: awayFromS2InAz.PodAntiAffinity,
	}
	nsTerm := func(op metav1.LabelSelectorOperator, namespaces ...string) v1.WeightedPodAffinityTerm {
		w := weighted(5, "region", exprs(req("security", metav1.LabelSelectorOpIn, "S1")))
		w.PodAffinityTerm.Namespaces = namespaces
		w.PodAffinityTerm.NamespaceSelector = exprs(req("team", op, "team1"))
		return w
	}
	affinityNamespaceSelector := preferred(nsTerm(metav1.LabelSelectorOpIn, "subteam2.team2"))
	antiAffinityNamespaceSelector := preferredAnti(nsTerm(metav1.LabelSelectorOpIn, "subteam2.team2"))
	affinityNegativeNamespaceSelector := preferred(nsTerm(metav1.LabelSelectorOpNotIn))
	antiAffinityNegativeNamespaceSelector := preferredAnti(nsTerm(metav1.LabelSelectorOpNotIn))
	invalidAffinityLabels := preferred(weighted(8, "region", exprs(req("security", metav1.LabelSelectorOpIn, "{{.bad-value.}}"))))
	invalidAntiAffinityLabels := preferredAnti(weighted(5, "az", exprs(req("security", metav1.LabelSelectorOpIn, "{{.bad-value.}}"))))

	tests := []scoreCase{
		{
			name:         "all nodes are same priority as Affinity is nil",
			pod:          schedtest.MakePod("p1").Namespace("").LabelMap(s1).Obj(),
			nodes:        []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelAzAz1)},
			wantPreScore: schedcore.Skip,
		},
		{
			name: "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others" +
				"which doesn't match either pods in nodes or in topology key",
			pod:   schedtest.MakePod("p2").Namespace("").LabelMap(s1).Affinity(stayWithS1InRegion).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p3").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p4").Namespace("").Node("node2").LabelMap(s2).Obj(), schedtest.MakePod("p5").Namespace("").Node("node3").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelAzAz1)},
			want:  scores("node1", max, "node2", 0, "node3", 0),
		},
		{
			name:  "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
			pod:   schedtest.MakePod("p6").Namespace("").Affinity(stayWithS1InRegion).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p7").Namespace("").Node("node1").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgChinaAzAz1), node("node3", labelRgIndia)},
			want:  scores("node1", max, "node2", max, "node3", 0),
		},
		{
			name: "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
			pod:  schedtest.MakePod("p8").Namespace("").LabelMap(s1).Affinity(stayWithS2InRegion).Obj(),
			pods: []*v1.Pod{schedtest.MakePod("p9").Namespace("").Node("node1").LabelMap(s2).Obj(), schedtest.MakePod("p10").Namespace("").Node("node1").LabelMap(s2).Obj(), schedtest.MakePod("p11").Namespace("").Node("node2").LabelMap(s2).Obj(), schedtest.MakePod("p12").Namespace("").Node("node3").LabelMap(s2).Obj(), schedtest.MakePod("p13").Namespace("").Node("node4").LabelMap(s2).Obj(), schedtest.MakePod("p14").Namespace("").Node("node5").LabelMap(s2).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelRgChina),
				node("node4", labelRgChina), node("node5", labelRgIndia)},
			want: scores("node1", max, "node2", 0, "node3", max, "node4", max, "node5", 0),
		},
		{
			name:  "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
			pod:   schedtest.MakePod("p15").Namespace("").LabelMap(s1).Affinity(affinity3).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p16").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p17").Namespace("").Node("node2").LabelMap(s2).Obj(), schedtest.MakePod("p18").Namespace("").Node("node3").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelAzAz1)},
			want:  scores("node1", 20, "node2", max, "node3", 0),
		},
		{
			name:  "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
			pod:   schedtest.MakePod("p19").Namespace("").LabelMap(s2).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p20").Namespace("").Node("node1").LabelMap(s1).Affinity(stayWithS1InRegion).Obj(), schedtest.MakePod("p21").Namespace("").Node("node2").LabelMap(s2).Affinity(stayWithS2InRegion).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelAzAz1)},
			want:  scores("node1", 0, "node2", max, "node3", 0),
		},
		{
			name:  "Affinity symmetry with namespace selector",
			pod:   schedtest.MakePod("p22").Namespace("subteam1.team1").LabelMap(s1).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p23").Namespace("").Node("node1").LabelMap(s1).Affinity(affinityNamespaceSelector).Obj(), schedtest.MakePod("p24").Namespace("").Node("node2").LabelMap(s2).Affinity(stayWithS2InRegion).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelAzAz1)},
			want:  scores("node1", max, "node2", 0, "node3", 0),
		},
		{
			name:  "AntiAffinity symmetry with namespace selector",
			pod:   schedtest.MakePod("p25").Namespace("subteam1.team1").LabelMap(s1).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p26").Namespace("").Node("node1").LabelMap(s1).Affinity(antiAffinityNamespaceSelector).Obj(), schedtest.MakePod("p27").Namespace("").Node("node2").LabelMap(s2).Affinity(stayWithS2InRegion).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelAzAz1)},
			want:  scores("node1", 0, "node2", max, "node3", max),
		},
		{
			name:  "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
			pod:   schedtest.MakePod("p28").Namespace("").LabelMap(s1).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p29").Namespace("").Node("node1").LabelMap(s1).Affinity(hardAffinity).Obj(), schedtest.MakePod("p30").Namespace("").Node("node2").LabelMap(s2).Affinity(hardAffinity).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelAzAz1)},
			want:  scores("node1", max, "node2", max, "node3", 0),
		},
		{
			name:  "Anti Affinity: pod that does not match existing pods in node will get high score ",
			pod:   schedtest.MakePod("p31").Namespace("").LabelMap(s1).Affinity(awayFromS1InAz).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p32").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p33").Namespace("").Node("node2").LabelMap(s2).Obj()},
			nodes: []*v1.Node{node("node1", labelAzAz1), node("node2", labelRgChina)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:  "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
			pod:   schedtest.MakePod("p34").Namespace("").LabelMap(s1).Affinity(awayFromS1InAz).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p35").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p36").Namespace("").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelAzAz1), node("node2", labelRgChina)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:  "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
			pod:   schedtest.MakePod("p37").Namespace("").LabelMap(s1).Affinity(awayFromS1InAz).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p38").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p39").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p40").Namespace("").Node("node2").LabelMap(s2).Obj()},
			nodes: []*v1.Node{node("node1", labelAzAz1), node("node2", labelRgIndia)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:  "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
			pod:   schedtest.MakePod("p41").Namespace("").LabelMap(s2).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p42").Namespace("").Node("node1").LabelMap(s1).Affinity(awayFromS2InAz).Obj(), schedtest.MakePod("p43").Namespace("").Node("node2").LabelMap(s2).Affinity(awayFromS1InAz).Obj()},
			nodes: []*v1.Node{node("node1", labelAzAz1), node("node2", labelAzAz2)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:  "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
			pod:   schedtest.MakePod("p44").Namespace("").LabelMap(s1).Affinity(stayWithS1InRegionAwayFromS2InAz).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p45").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p46").Namespace("").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelAzAz1)},
			want:  scores("node1", max, "node2", 0),
		},
		{
			name: "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
			pod:  schedtest.MakePod("p47").Namespace("").LabelMap(s1).Affinity(stayWithS1InRegionAwayFromS2InAz).Obj(),
			pods: []*v1.Pod{schedtest.MakePod("p48").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p49").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p50").Namespace("").Node("node2").LabelMap(s1).Obj(), schedtest.MakePod("p51").Namespace("").Node("node3").LabelMap(s1).Obj(),
				schedtest.MakePod("p52").Namespace("").Node("node3").LabelMap(s1).Obj(), schedtest.MakePod("p53").Namespace("").Node("node4").LabelMap(s1).Obj(), schedtest.MakePod("p54").Namespace("").Node("node5").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChinaAzAz1), node("node2", labelRgIndia), node("node3", labelRgChina),
				node("node4", labelRgChina), node("node5", labelRgIndia)},
			want: scores("node1", max, "node2", 0, "node3", max, "node4", max, "node5", 0),
		},
		{
			// Affinity 8,0,0,0; anti-affinity 0,-5,0,0; affinity symmetry
			// 0,0,8,0; anti-affinity symmetry 0,0,0,-5.
			name: "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
			pod:  schedtest.MakePod("p55").Namespace("").LabelMap(s1).Affinity(stayWithS1InRegionAwayFromS2InAz).Obj(),
			pods: []*v1.Pod{schedtest.MakePod("p56").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p57").Namespace("").Node("node2").LabelMap(s2).Obj(), schedtest.MakePod("p58").Namespace("").Node("node3").Affinity(stayWithS1InRegionAwayFromS2InAz).Obj(),
				schedtest.MakePod("p59").Namespace("").Node("node4").Affinity(awayFromS1InAz).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelAzAz1), node("node3", labelRgIndia), node("node4", labelAzAz2)},
			want:  scores("node1", max, "node2", 0, "node3", max, "node4", 0),
		},
		{
			name:  "Avoid panic when partial nodes in a topology don't have pods with affinity",
			pod:   schedtest.MakePod("p60").Namespace("").LabelMap(s1).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p61").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p62").Namespace("").Node("node2").Affinity(stayWithS1InRegionAwayFromS2InAz).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgChina)},
			want:  scores("node1", 0, "node2", 0),
		},
		{
			name:          "invalid Affinity fails PreScore",
			pod:           schedtest.MakePod("p63").Namespace("").Affinity(invalidAffinityLabels).Obj(),
			nodes:         []*v1.Node{node("node1", labelRgChina), node("node2", labelRgChina)},
			wantPreScore:  schedcore.Error,
			wantErrSubstr: `failed to parse pod: preferredAffinityTerms: values[0][security]: Invalid value: "{{.bad-value.}}"`,
		},
		{
			name:          "invalid AntiAffinity fails PreScore",
			pod:           schedtest.MakePod("p64").Namespace("").Affinity(invalidAntiAffinityLabels).Obj(),
			nodes:         []*v1.Node{node("node1", labelRgChina), node("node2", labelRgChina)},
			wantPreScore:  schedcore.Error,
			wantErrSubstr: `failed to parse pod: preferredAntiAffinityTerms: values[0][security]: Invalid value: "{{.bad-value.}}"`,
		},
		{
			name: "Affinity with pods matching NamespaceSelector",
			pod:  schedtest.MakePod("p65").Namespace("subteam1.team1").LabelMap(s1).Affinity(affinityNamespaceSelector).Obj(),
			pods: []*v1.Pod{schedtest.MakePod("p66").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p67").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(),
				schedtest.MakePod("p68").Namespace("subteam1.team2").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p69").Namespace("subteam2.team1").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			want:  scores("node1", max, "node2", 0),
		},
		{
			name: "Affinity with pods matching both NamespaceSelector and Namespaces fields",
			pod:  schedtest.MakePod("p70").Namespace("subteam1.team1").LabelMap(s1).Affinity(affinityNamespaceSelector).Obj(),
			pods: []*v1.Pod{schedtest.MakePod("p71").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p72").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(),
				schedtest.MakePod("p73").Namespace("subteam2.team2").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p74").Namespace("subteam2.team1").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			want:  scores("node1", max, "node2", 0),
		},
		{
			name: "AntiAffinity with pods matching NamespaceSelector",
			pod:  schedtest.MakePod("p75").Namespace("subteam1.team1").LabelMap(s1).Affinity(antiAffinityNamespaceSelector).Obj(),
			pods: []*v1.Pod{schedtest.MakePod("p76").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p77").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(),
				schedtest.MakePod("p78").Namespace("subteam1.team2").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p79").Namespace("subteam2.team1").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name: "AntiAffinity with pods matching both NamespaceSelector and Namespaces fields",
			pod:  schedtest.MakePod("p80").Namespace("subteam1.team1").LabelMap(s1).Affinity(antiAffinityNamespaceSelector).Obj(),
			pods: []*v1.Pod{schedtest.MakePod("p81").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p82").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(),
				schedtest.MakePod("p83").Namespace("subteam2.team2").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p84").Namespace("subteam2.team1").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:  "Affinity with pods correctly enforcing negative NamespaceSelector",
			pod:   schedtest.MakePod("p85").Namespace("subteam1.team1").LabelMap(s1).Affinity(affinityNegativeNamespaceSelector).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p86").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p87").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p88").Namespace("subteam1.team2").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:  "AntiAffinity with pods correctly enforcing negative NamespaceSelector",
			pod:   schedtest.MakePod("p89").Namespace("subteam1.team1").LabelMap(s1).Affinity(antiAffinityNegativeNamespaceSelector).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p90").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p91").Namespace("subteam1.team1").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p92").Namespace("subteam1.team2").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			want:  scores("node1", max, "node2", 0),
		},
		{
			name:         "Ignore preferred terms of existing pods",
			pod:          schedtest.MakePod("p93").Namespace("").LabelMap(s2).Obj(),
			pods:         []*v1.Pod{schedtest.MakePod("p94").Namespace("").Node("node1").LabelMap(s1).Affinity(stayWithS1InRegionAwayFromS2InAz).Obj(), schedtest.MakePod("p95").Namespace("").Node("node2").LabelMap(s2).Affinity(stayWithS2InRegion).Obj()},
			nodes:        []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			args:         &configv1.InterPodAffinityArgs{IgnorePreferredTermsOfExistingPods: true},
			wantPreScore: schedcore.Skip,
		},
		{
			name:  "Do not ignore preferred terms of existing pods",
			pod:   schedtest.MakePod("p96").Namespace("").LabelMap(s2).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p97").Namespace("").Node("node1").LabelMap(s1).Affinity(stayWithS1InRegionAwayFromS2InAz).Obj(), schedtest.MakePod("p98").Namespace("").Node("node2").LabelMap(s2).Affinity(stayWithS2InRegion).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			args:  &configv1.InterPodAffinityArgs{IgnorePreferredTermsOfExistingPods: false},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:         "No nodes to score",
			pod:          schedtest.MakePod("p99").Namespace("").LabelMap(s2).Obj(),
			wantPreScore: schedcore.Skip,
		},
		// Not in kube's table.
		{
			name:  "With ignorePreferredTermsOfExistingPods, existing pods' preferred terms still count when the pod has preferred terms",
			pod:   schedtest.MakePod("p100").Namespace("").LabelMap(s2).Affinity(preferred(weighted(1, "region", exprs(req("security", metav1.LabelSelectorOpIn, "S3"))))).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p101").Namespace("").Node("node1").LabelMap(s1).Affinity(stayWithS1InRegionAwayFromS2InAz).Obj(), schedtest.MakePod("p102").Namespace("").Node("node2").LabelMap(s2).Affinity(stayWithS2InRegion).Obj()},
			nodes: []*v1.Node{node("node1", labelRgChina), node("node2", labelRgIndia)},
			args:  &configv1.InterPodAffinityArgs{IgnorePreferredTermsOfExistingPods: true},
			want:  scores("node1", 0, "node2", max),
		},
		{
			name:  "An existing pod on a node without labels contributes nothing",
			pod:   schedtest.MakePod("p103").Namespace("").LabelMap(s1).Affinity(stayWithS1InRegion).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p104").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p105").Namespace("").Node("node2").LabelMap(s1).Obj()},
			nodes: []*v1.Node{node("node1", nil), node("node2", labelRgChina)},
			want:  scores("node1", 0, "node2", max),
		},
		{
			// Raw scores -5, 0, 3: node2 gets int64(100 * (5/8.0)) = 62.
			name: "Mixed preferred affinity and anti-affinity normalize from the minimum",
			pod: schedtest.MakePod("p106").Namespace("").LabelMap(s1).Affinity(&v1.Affinity{
				PodAffinity:     preferred(weighted(3, "region", exprs(req("security", metav1.LabelSelectorOpIn, "S2")))).PodAffinity,
				PodAntiAffinity: preferredAnti(weighted(5, "az", exprs(req("security", metav1.LabelSelectorOpIn, "S1")))).PodAntiAffinity,
			}).Obj(),
			pods:  []*v1.Pod{schedtest.MakePod("p107").Namespace("").Node("node1").LabelMap(s1).Obj(), schedtest.MakePod("p108").Namespace("").Node("node3").LabelMap(s2).Obj()},
			nodes: []*v1.Node{node("node1", labelAzAz1), node("node2", labelRgIndia), node("node3", labelRgChina)},
			want:  scores("node1", 0, "node2", 62, "node3", max),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.args == nil {
				tt.args = &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To[int32](1)}
			}
			runScoreCase(t, tt)
		})
	}
}

// Ported from kube's TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
func TestPreferredAffinityWithHardPodAffinityWeight(t *testing.T) {
	serviceS1 := map[string]string{"service": "S1"}
	hardPodAffinity := &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector:     exprs(req("service", metav1.LabelSelectorOpIn, "S1")),
		Namespaces:        []string{"", "subteam2.team2"},
		NamespaceSelector: exprs(req("team", metav1.LabelSelectorOpIn, "team1")),
		TopologyKey:       "region",
	}}}}
	pods := []*v1.Pod{schedtest.MakePod("p109").Namespace("").Node("node1").Affinity(hardPodAffinity).Obj(), schedtest.MakePod("p110").Namespace("").Node("node2").Affinity(hardPodAffinity).Obj()}
	nodes := []*v1.Node{node("node1", map[string]string{"region": "China"}), node("node2", map[string]string{"region": "India"}), node("node3", map[string]string{"az": "az1"})}
	tests := []struct {
		name         string
		ns           string
		weight       int32
		want         schedcore.NodeScoreList
		wantPreScore schedcore.Code
	}{
		{name: "with default weight", weight: 1, want: scores("node1", 100, "node2", 100, "node3", 0)},
		{name: "with zero weight", weight: 0, wantPreScore: schedcore.Skip},
		{name: "with no matching namespace", ns: "subteam1.team2", weight: 1, wantPreScore: schedcore.Skip},
		{name: "with matching NamespaceSelector", ns: "subteam1.team1", weight: 1, want: scores("node1", 100, "node2", 100, "node3", 0)},
		{name: "with matching Namespaces", ns: "subteam2.team2", weight: 1, want: scores("node1", 100, "node2", 100, "node3", 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runScoreCase(t, scoreCase{
				pod:          schedtest.MakePod("p111").Namespace(tt.ns).LabelMap(serviceS1).Obj(),
				pods:         pods,
				nodes:        nodes,
				args:         &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To(tt.weight)},
				want:         tt.want,
				wantPreScore: tt.wantPreScore,
			})
		})
	}
}

func TestHardPodAffinityWeightScalesExistingPodsRequiredAffinity(t *testing.T) {
	// node1's pod requires the incoming pod in its region (weight w); node2's
	// pod prefers it with weight 10. w=5 puts China below India, w=20 above.
	hard := &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		{LabelSelector: exprs(req("app", metav1.LabelSelectorOpIn, "web")), TopologyKey: "region"},
	}}}
	soft := preferred(weighted(10, "region", exprs(req("app", metav1.LabelSelectorOpIn, "web"))))
	pods := []*v1.Pod{schedtest.MakePod("p112").Namespace("").Node("node1").Affinity(hard).Obj(), schedtest.MakePod("p113").Namespace("").Node("node2").Affinity(soft).Obj()}
	nodes := []*v1.Node{node("node1", map[string]string{"region": "China"}), node("node2", map[string]string{"region": "India"}), node("node3", map[string]string{"az": "az1"})}
	for _, tt := range []struct {
		weight int32
		want   schedcore.NodeScoreList
	}{
		{5, scores("node1", 50, "node2", 100, "node3", 0)},
		{20, scores("node1", 100, "node2", 50, "node3", 0)},
	} {
		runScoreCase(t, scoreCase{
			pod: schedtest.MakePod("p114").Namespace("").LabelMap(map[string]string{"app": "web"}).Obj(), pods: pods, nodes: nodes,
			args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To(tt.weight)}, want: tt.want,
		})
	}
}

func TestNormalizeScore(t *testing.T) {
	tests := []struct {
		name     string
		scored   bool // some domain has a score (else NormalizeScore does nothing)
		in, want []int64
	}{
		{name: "scores are mapped from [min, max] onto [0, 100]", scored: true, in: []int64{0, 29, 50}, want: []int64{0, 57, 100}},
		{name: "float64 arithmetic truncates 100*(29/50) to 57 where integer arithmetic gives 58", scored: true, in: []int64{-50, -21, 0}, want: []int64{0, 57, 100}},
		{name: "one third truncates to 33", scored: true, in: []int64{0, 1, 3}, want: []int64{0, 33, 100}},
		{name: "equal scores all become 0", scored: true, in: []int64{7, 7, 7}, want: []int64{0, 0, 0}},
		{name: "negative-only scores still span [0, 100]", scored: true, in: []int64{-10, -5, 0}, want: []int64{0, 50, 100}},
		{name: "an empty topology score leaves the scores as they are", scored: false, in: []int64{3, 9}, want: []int64{3, 9}},
	}
	snap := newSnapshot(nil, []*v1.Node{node("n", map[string]string{"k": "v"})}, nil)
	p := newPlugin(t, nil, snap, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := schedcore.NewCycleState()
			s := &preScoreState{scores: schedcore.NewDomainCounts(snap, "k")}
			if tt.scored {
				s.scores.AddValue(0, "v", 1)
			}
			cs.Write(preScoreStateKey, s)
			l := make(schedcore.NodeScoreList, len(tt.in))
			for i, s := range tt.in {
				l[i].Score = s
			}
			if s := plugintest.Normalize(context.Background(), p, cs, &v1.Pod{}, l); !s.IsSuccess() {
				t.Fatal(s.Message())
			}
			got := make([]int64, len(l))
			for i := range l {
				got[i] = l[i].Score
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreWithoutPreScoreIsAnError(t *testing.T) {
	p := newPlugin(t, nil, schedcore.NewEmptySnapshot(), false)
	ni := schedcore.NewNodeInfo()
	ni.SetNode(&v1.Node{})
	_, s := p.Score(context.Background(), schedcore.NewCycleState(), &v1.Pod{}, ni)
	if diff := cmp.Diff(want(schedcore.Error, `reading "PreScoreInterPodAffinity" from cycleState: not found`), res(s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
