package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// sched runs a kubectl-sched command line in-process against the cluster.
func sched(t *testing.T, c *cluster.Cluster, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code = cli.Execute(streams, cli.Settings{}, append(args, "--kubeconfig", c.Kubeconfig))
	return code, out.String(), errOut.String()
}

func explainJSON(t *testing.T, c *cluster.Cluster, args ...string) *report.Explanation {
	t.Helper()
	code, out, stderr := sched(t, c, append([]string{"explain", "pod"}, append(args, "-o", "json")...)...)
	if code != 0 {
		t.Fatalf("explain %v: exit %d: %s", args, code, stderr)
	}
	var e report.Explanation
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("explain %v: output is not JSON: %v", args, err)
	}
	return &e
}

// waitScheduled waits until the real scheduler has bound the pod or marked
// it Unschedulable.
func waitScheduled(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string) *v1.Pod {
	t.Helper()
	return waitForPod(ctx, t, client, ns, name, func(p *v1.Pod) bool {
		if p.Spec.NodeName != "" {
			return true
		}
		c := podCondition(p, v1.PodScheduled)
		return c != nil && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable
	})
}

// TestExplainLive explains, against a live API server, a pod the real
// kube-scheduler could not place, a pod it bound, and a hypothetical pod
// from a file, and checks the verdicts against the real scheduler's.
func TestExplainLive(t *testing.T) {
	c := cluster.StartForTest(t, cluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	specs := []cluster.NodeSpec{
		{Name: "small", Zone: "zone-a", CPU: "2", Memory: "8Gi"},
		{Name: "big", Zone: "zone-b", CPU: "8", Memory: "32Gi"},
		{Name: "gpu", Zone: "zone-a", CPU: "16", Memory: "64Gi", Taints: []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}},
		{Name: "cordoned", Zone: "zone-b", CPU: "16", Memory: "64Gi", Unschedulable: true},
	}
	if err := cluster.CreateNodes(ctx, c.Client, cluster.Nodes(specs)); err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(ctx, t, c.Client, "explain")
	fits := makePod("fits", "1", nil)
	tooBig := makePod("too-big", "12", nil)
	createPods(ctx, t, c.Client, ns, fits, tooBig)
	s, err := c.StartScheduler(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	bound := waitScheduled(ctx, t, c.Client, ns, fits.Name)
	pending := waitScheduled(ctx, t, c.Client, ns, tooBig.Name)
	s.Stop(10 * time.Second)
	if bound.Spec.NodeName == "" || pending.Spec.NodeName != "" {
		t.Fatalf("real scheduler: %s on %q, %s on %q; want bound and pending", fits.Name, bound.Spec.NodeName, tooBig.Name, pending.Spec.NodeName)
	}

	t.Run("a pending pod: every failure, kube's message, the gap", func(t *testing.T) {
		e := explainJSON(t, c, tooBig.Name, "-n", ns)
		if e.Source != "cluster" || e.NumNodes != 4 || e.NumFeasible != 0 || e.Selected != "" {
			t.Errorf("source %s, %d nodes, %d feasible, selected %q; want cluster, 4, 0, none", e.Source, e.NumNodes, e.NumFeasible, e.Selected)
		}
		// kube-scheduler adds the PostFilter (preemption) outcome to the
		// FitError; explain reports it apart, in preemption.message.
		kubeMsg := podCondition(pending, v1.PodScheduled).Message
		if e.Message == "" || e.Preemption == nil || kubeMsg != e.Message+" "+e.Preemption.Message {
			t.Errorf("message:\n explain %q + %+v\n    kube %q", e.Message, e.Preemption, kubeMsg)
		}
		want := map[string][]string{
			"small":    {"NodeResourcesFit"},
			"big":      {"NodeResourcesFit"},
			"gpu":      {"TaintToleration"},
			"cordoned": {"NodeUnschedulable"}, // no admission plugin taints it here
		}
		got := map[string][]string{}
		gaps := map[string]string{}
		for _, n := range e.Nodes {
			for _, f := range n.Failures {
				got[n.Node] = append(got[n.Node], f.Plugin)
			}
			for _, g := range n.Gaps {
				gaps[n.Node] += g.Gap + "; "
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("failing plugins per node (-want +got):\n%s", d)
		}
		if !strings.Contains(gaps["gpu"], "taint dedicated=gpu:NoSchedule not tolerated") {
			t.Errorf("gpu gaps = %q", gaps["gpu"])
		}
		if !strings.Contains(gaps["big"], "requests 12 cpu, more than the node's allocatable 7900m") {
			t.Errorf("big gaps = %q", gaps["big"])
		}
	})

	t.Run("a bound pod: its node ranks first, as the real scheduler chose", func(t *testing.T) {
		e := explainJSON(t, c, fits.Name, "-n", ns)
		if e.BoundNode != bound.Spec.NodeName || e.BoundNodeRank != 1 || e.Selected != bound.Spec.NodeName {
			t.Errorf("bound %q rank %d, selected %q; the real scheduler bound it to %q", e.BoundNode, e.BoundNodeRank, e.Selected, bound.Spec.NodeName)
		}
		code, out, _ := sched(t, c, "explain", "pod", fits.Name, "-n", ns)
		if code != 0 || !strings.Contains(out, "Bound node:         "+bound.Spec.NodeName+", ranked 1 of ") {
			t.Errorf("table (exit %d):\n%s", code, out)
		}
	})

	t.Run("a hypothetical pod from a file", func(t *testing.T) {
		p := makePod("new-gpu-job", "6", nil)
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
		p.APIVersion, p.Kind = "v1", "Pod"
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "pod.json")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		e := explainJSON(t, c, "-f", file, "-n", ns)
		var feasible []string
		for _, n := range e.Nodes {
			if n.Feasible {
				feasible = append(feasible, n.Node)
			}
		}
		if e.Source != "file" || e.Pod != ns+"/new-gpu-job" || !cmp.Equal([]string{"big", "gpu"}, feasible) || e.Selected != "gpu" {
			t.Errorf("source %s, pod %s, feasible %v, selected %q; want file, %s/new-gpu-job, [big gpu], gpu", e.Source, e.Pod, feasible, e.Selected, ns)
		}
		if _, err := c.Client.CoreV1().Pods(ns).Get(ctx, "new-gpu-job", metav1.GetOptions{}); err == nil {
			t.Error("explain created the hypothetical pod")
		}
	})

	t.Run("a pod that does not exist", func(t *testing.T) {
		code, out, stderr := sched(t, c, "explain", "pod", "nope", "-n", ns)
		if code != 2 || out != "" || stderr != fmt.Sprintf("error: pods \"nope\" not found in namespace %q\n", ns) {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})
}

// TestSnapshotDryRunMatchesKubeScheduler dumps a cluster with pending pods
// through `kubectl sched snapshot`, dry-runs the dump, then lets the real
// kube-scheduler place the same pods, and compares. The pods come in kinds
// (identical pods within a kind, a disjoint pool of nodes per kind), so the
// placements do not depend on the order the real scheduler's queue takes
// them in; the test checks that no placement was a tie, where the real
// scheduler picks at random.
func TestSnapshotDryRunMatchesKubeScheduler(t *testing.T) {
	c := cluster.StartForTest(t, cluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	specs, pods := roundTripWorkload(roundTripSizes)
	if err := cluster.CreateNodes(ctx, c.Client, cluster.Nodes(specs)); err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(ctx, t, c.Client, "roundtrip")
	createPods(ctx, t, c.Client, ns, pods...)

	dump := filepath.Join(t.TempDir(), "cluster.yaml")
	if code, _, stderr := sched(t, c, "snapshot", "-A", "--output-file", dump); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, stderr)
	}
	var out, errOut bytes.Buffer
	code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, cli.Settings{}, []string{"dryrun", "-f", dump, "-o", "json"})
	if code != 0 {
		t.Fatalf("dryrun of the snapshot: exit %d: %s", code, errOut.String())
	}
	var rep report.DryRun
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	for _, pl := range rep.Placements {
		if pl.RunnerUp != nil && pl.RunnerUp.Score == pl.Score {
			t.Errorf("%s: tie between %s and %s (score %d): the real scheduler would pick at random; change the node sizes", pl.Pod, pl.Node, pl.RunnerUp.Node, pl.Score)
		}
	}

	s, err := c.StartScheduler(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(10 * time.Second)
	real := map[string]string{}
	for _, p := range pods {
		got := waitScheduled(ctx, t, c.Client, ns, p.Name)
		real[ns+"/"+p.Name] = orUnschedulable(got.Spec.NodeName)
	}
	dry := map[string]string{}
	for _, pl := range rep.Placements {
		dry[pl.Pod] = pl.Node
	}
	for _, u := range rep.Unschedulable {
		dry[u.Pod] = "<unschedulable>"
	}
	t.Logf("kube-scheduler's placements per kind: %v", perKind(real))
	if d := cmp.Diff(perKind(real), perKind(dry)); d != "" {
		t.Errorf("pods per node and kind (-kube-scheduler +dryrun of the snapshot):\n%s", d)
	}
	if n := len(rep.Unschedulable); n != 3 {
		t.Errorf("dry-run: %d unschedulable, want 3 (2 huge, 1 apart)", n)
	}
}

// roundTripSizes are the node cpu sizes of pools a, b and c, chosen so that
// no placement of the round trip is a tie.
var roundTripSizes = [3][]string{{"23", "6", "3"}, {"27", "10", "13", "8", "5", "32"}, {"3", "21", "19", "8"}}

// roundTripWorkload builds the nodes and pending pods of the round trip:
// per pool, identical pods of one kind.
func roundTripWorkload(sizes [3][]string) ([]cluster.NodeSpec, []*v1.Pod) {
	pool := func(name string) map[string]string { return map[string]string{"pool": name} }
	var specs []cluster.NodeSpec
	for i, cpu := range sizes[0] {
		specs = append(specs, cluster.NodeSpec{Name: fmt.Sprintf("a-%d", i), Zone: "zone-" + string(rune('a'+i)), CPU: cpu, Memory: fmt.Sprintf("%dGi", 16+9*i), Labels: pool("a")})
	}
	for i, cpu := range sizes[1] {
		specs = append(specs, cluster.NodeSpec{Name: fmt.Sprintf("b-%d", i), Zone: "zone-" + string(rune('a'+i%3)), CPU: cpu, Memory: fmt.Sprintf("%dGi", 8+4*i), Labels: pool("b")})
	}
	for i, cpu := range sizes[2] {
		specs = append(specs, cluster.NodeSpec{Name: fmt.Sprintf("c-%d", i), Zone: "zone-a", CPU: cpu, Memory: "16Gi", Labels: pool("c")})
	}
	specs = append(specs, cluster.NodeSpec{Name: "gpu-0", Zone: "zone-a", CPU: "32", Memory: "128Gi", Labels: pool("gpu"),
		Taints: []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}})

	kind := func(name string, i int, cpu string, sel map[string]string) *v1.Pod {
		p := makePod(fmt.Sprintf("%s-%d", name, i), cpu, sel)
		p.Labels = map[string]string{"kind": name}
		return p
	}
	var pods []*v1.Pod
	for i := 0; i < 8; i++ {
		pods = append(pods, kind("plain", i, "1", pool("a")))
	}
	for i := 0; i < 9; i++ {
		p := kind("spread", i, "1500m", pool("b"))
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kind": "spread"}},
		}}
		pods = append(pods, p)
	}
	for i := 0; i < 5; i++ {
		p := kind("apart", i, "2", pool("c"))
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kind": "apart"}},
		}}}}
		pods = append(pods, p) // the fifth finds no node
	}
	for i := 0; i < 3; i++ {
		p := kind("gpu", i, "4", pool("gpu"))
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
		p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("8Gi")
		pods = append(pods, p)
	}
	for i := 0; i < 2; i++ {
		pods = append(pods, kind("huge", i, "64", nil))
	}
	return specs, pods
}

func orUnschedulable(node string) string {
	if node == "" {
		return "<unschedulable>"
	}
	return node
}

// perKind counts pods per kind (the name before the last '-') and node:
// pods of one kind are interchangeable.
func perKind(placements map[string]string) map[string][]string {
	out := map[string][]string{}
	for pod, node := range placements {
		name := pod[strings.Index(pod, "/")+1:]
		k := name[:strings.LastIndex(name, "-")]
		out[k] = append(out[k], node)
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}
