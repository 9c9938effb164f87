package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/capacity"
	"github.com/kubectl-sched/kubectl-sched/internal/drain"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

const whatifDir = "../../testdata/kubebench/whatif"

// whatifCase is a line of testdata/kubebench/whatif/cases.txt: a run of
// hack/kubebench -capacity or -drain recorded into NAME.json.
type whatifCase struct {
	name, mode, cluster, arg string
	opts                     map[string]string
}

func whatifCases(t *testing.T, mode string) []whatifCase {
	t.Helper()
	f, err := os.Open(filepath.Join(whatifDir, "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []whatifCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 4 {
			t.Fatalf("cases.txt: %q: want NAME MODE CLUSTER ARG [OPTIONS]", sc.Text())
		}
		c := whatifCase{name: fields[0], mode: fields[1], cluster: fields[2], arg: fields[3], opts: map[string]string{}}
		for _, o := range fields[4:] {
			k, v, _ := strings.Cut(o, "=")
			c.opts[k] = v
		}
		if c.mode == mode {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatalf("cases.txt: no %s cases", mode)
	}
	return out
}

func (c whatifCase) skipUnlessLong(t *testing.T) {
	if _, long := c.opts["long"]; long && os.Getenv("KUBECTL_SCHED_LONG") != "1" {
		t.Skip("set KUBECTL_SCHED_LONG=1 to run")
	}
}

func (c whatifCase) intOpt(t *testing.T, k string) int {
	v, ok := c.opts[k]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", c.name, k, v, err)
	}
	return n
}

// whatifCluster loads a case's cluster as hack/kubebench/whatif-refs.sh
// makes it: a file, or a generated workload (the generator is
// deterministic).
func whatifCluster(t *testing.T, spec string) *snapshot.Cluster {
	t.Helper()
	if !strings.HasPrefix(spec, "gen:") {
		path := filepath.Join(whatifDir, spec)
		if strings.Contains(spec, "/") {
			path = filepath.Join("../..", spec)
		}
		cl, err := snapshot.LoadPaths([]string{path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	parts := strings.Split(spec, ":")
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		return n
	}
	var p workload.Params
	switch len(parts) {
	case 3:
		p.Seed = uint64(atoi(parts[2]))
	case 5:
		p = workload.Params{Nodes: atoi(parts[2]), InitPods: atoi(parts[3]), Seed: uint64(atoi(parts[4]))}
	default:
		t.Fatalf("cluster %q: want gen:WORKLOAD:SEED or gen:Mixed:NODES:RUNNING:SEED", spec)
	}
	w, err := workload.Generate(parts[1], p)
	if err != nil {
		t.Fatal(err)
	}
	cl := &snapshot.Cluster{Namespaces: w.Namespaces, Nodes: w.Nodes, Services: w.Services}
	cl.Pods = append(append(cl.Pods, w.Existing...), w.Pending...)
	return cl
}

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestKubebenchCapacity counts copies as `kubectl sched capacity` does and
// compares with kube-scheduler's own count (hack/kubebench -capacity): the
// count, where the copies landed and the message of the copy that fits
// nowhere; and, for the counts made node by node, also the one made cycle
// by cycle (--cycles), placement by placement, when it is short.
func TestKubebenchCapacity(t *testing.T) {
	for _, c := range whatifCases(t, "capacity") {
		t.Run(c.name, func(t *testing.T) {
			c.skipUnlessLong(t)
			var want struct {
				Count      int            `json:"count"`
				Nodes      map[string]int `json:"nodes"`
				Placements []struct {
					Pod, Node string
				} `json:"placements"`
				StoppedBy string `json:"stoppedBy"`
			}
			readJSON(t, filepath.Join(whatifDir, c.name+".json"), &want)
			cl := whatifCluster(t, c.cluster)
			if g := c.opts["gang"]; g != "" {
				checkGang(t, cl, g, want.Count, want.StoppedBy, want.Placements)
				return
			}
			cfg, reg := defaultEngine(t)
			all := int32(100)
			cfg.PercentageOfNodesToScore = &all
			specs, err := capacity.LoadSpecs([]string{filepath.Join(whatifDir, c.arg)}, nil, "", cl)
			if err != nil {
				t.Fatal(err)
			}
			o := capacity.Options{Config: cfg, Registry: reg, Max: c.intOpt(t, "max"), Nearest: -1}
			if n := c.intOpt(t, "add"); n > 0 {
				if o.Template, err = capacity.LoadNodeTemplate(filepath.Join(whatifDir, "m6i.yaml"), nil); err != nil {
					t.Fatal(err)
				}
				o.AddNodes = n
			}
			var seq []string
			o.Placed = func(_, pod, node string) { seq = append(seq, pod+" -> "+node) }
			rep, err := capacity.Run(context.Background(), cl, specs, o)
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Specs[0]
			if got.Count != want.Count {
				t.Fatalf("count: got %d, want %d (method %s)", got.Count, want.Count, got.Method)
			}
			if d := cmp.Diff(want.Nodes, got.Nodes); d != "" {
				t.Errorf("copies per node (-want +got):\n%s", d)
			}
			if got.StoppedBy != want.StoppedBy {
				t.Errorf("stopped by:\n got %q\nwant %q", got.StoppedBy, want.StoppedBy)
			}
			if got.Method == report.MethodNodeLocal {
				if want.Count > 2000 {
					return
				}
				o.Cycles, seq = true, nil
				if rep, err = capacity.Run(context.Background(), cl, specs, o); err != nil {
					t.Fatal(err)
				}
				if rep.Specs[0].Method != report.MethodCycles {
					t.Fatalf("--cycles: method %s", rep.Specs[0].Method)
				}
			}
			var wantSeq []string
			for _, p := range want.Placements {
				wantSeq = append(wantSeq, p.Pod+" -> "+p.Node)
			}
			if d := cmp.Diff(wantSeq, seq); d != "" {
				t.Errorf("placements (-want +got):\n%s", d)
			}
			if r := c.intOpt(t, "min"); r > 0 {
				checkMinNodes(t, c, cl, specs, o, r, want.Count)
			}
		})
	}
}

// checkMinNodes checks a min=R case: kube placed R copies with the case's
// add=N template nodes and fewer with N-1 (the reference NAME-1), and
// `capacity --min-nodes --replicas R` answers N.
func checkMinNodes(t *testing.T, c whatifCase, cl *snapshot.Cluster, specs []*capacity.Spec, o capacity.Options, r, kubeCount int) {
	t.Helper()
	n := c.intOpt(t, "add")
	if kubeCount != r {
		t.Fatalf("min=%d: kube placed %d copies with %d template nodes; the case must reach R", r, kubeCount, n)
	}
	var below struct {
		Count int `json:"count"`
	}
	readJSON(t, filepath.Join(whatifDir, c.name+"-1.json"), &below)
	if below.Count >= r {
		t.Fatalf("min=%d: kube placed %d copies with %d template nodes: %d is not the fewest", r, below.Count, n-1, n)
	}
	for _, s := range specs {
		s.Replicas = r
	}
	o.AddNodes, o.Max, o.MinNodes, o.Cycles, o.Placed = 0, 0, true, false, nil
	rep, err := capacity.Run(context.Background(), cl, specs, o)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.MinNodes
	if m == nil || !m.Reachable || m.NodesNeeded != n {
		t.Fatalf("--min-nodes --replicas %d: got %+v, want %d nodes (kube: %d copies with %d, %d with %d)", r, m, n, kubeCount, n, below.Count, n-1)
	}
}

// checkGang checks a gang=FILE case: FILE is a gang of k pods, each the
// case's spec pod (what kube placed, copy after copy) in a PodGroup, counted
// with Coscheduling. A group is placed whole or not at all, so kube's copies
// give the answer: count/k whole groups, their members on kube's nodes in
// kube's order, and the group after them stopped by the member that fits
// nowhere, with kube's message for it (Coscheduling's PostFilter adds a
// sentence naming the group).
func checkGang(t *testing.T, cl *snapshot.Cluster, file string, kubeCount int, kubeStopped string, kubePlaced []struct{ Pod, Node string }) {
	t.Helper()
	cfg, err := engine.LoadConfig("../../testdata/gang/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	all := int32(100)
	cfg.PercentageOfNodesToScore = &all
	specs, err := capacity.LoadSpecs([]string{filepath.Join(whatifDir, file)}, nil, "", cl)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	o := capacity.Options{Config: cfg, Registry: reg, Nearest: -1, Placed: func(_, _, node string) { nodes = append(nodes, node) }}
	rep, err := capacity.Run(context.Background(), cl, specs, o)
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Specs[0]
	k := got.PodsPerGroup
	if got.Kind != capacity.KindPodGroup || k < 2 {
		t.Fatalf("%s: kind %s, %d pods per group: not a gang", file, got.Kind, k)
	}
	if got.Count != kubeCount/k {
		t.Fatalf("groups: got %d of %d pods, want %d (kube placed %d pods)", got.Count, k, kubeCount/k, kubeCount)
	}
	var want []string
	for _, p := range kubePlaced[:got.Count*k] {
		want = append(want, p.Node)
	}
	if d := cmp.Diff(want, nodes); d != "" {
		t.Errorf("members' nodes in order (-kube +got):\n%s", d)
	}
	if !strings.HasPrefix(got.StoppedBy, kubeStopped+" PodGroup ") {
		t.Errorf("stopped by:\n got %q\nwant %q and the group's sentence", got.StoppedBy, kubeStopped)
	}
}

// drainNodes resolves a case's NODES (names, first:N, step:S:N).
func drainNodes(t *testing.T, cl *snapshot.Cluster, spec string) []string {
	var names []string
	for _, n := range cl.Nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	p := strings.Split(spec, ":")
	switch p[0] {
	case "first":
		n, _ := strconv.Atoi(p[1])
		return names[:n]
	case "step":
		s, _ := strconv.Atoi(p[1])
		n, _ := strconv.Atoi(p[2])
		var out []string
		for i := 0; i < len(names) && len(out) < n; i += s {
			out = append(out, names[i])
		}
		return out
	}
	return strings.Split(spec, ",")
}

// TestKubebenchDrain drains as `kubectl sched drain` does and compares with
// kubectl's drain helper and kube-scheduler (hack/kubebench -drain): the
// pods evicted, the nodes refused, the pods recreated, and every move: the
// same node for each pod in the same order, the same message for those left
// pending, the same preemption victims.
func TestKubebenchDrain(t *testing.T) {
	for _, c := range whatifCases(t, "drain") {
		t.Run(c.name, func(t *testing.T) {
			c.skipUnlessLong(t)
			var want struct {
				Evicted    []string          `json:"evicted"`
				Refused    map[string]string `json:"refused"`
				Replaced   []string          `json:"replaced"`
				Placements []struct {
					Pod, Node string
				} `json:"placements"`
				Unschedulable []struct {
					Pod, Message string
				} `json:"unschedulable"`
				Evictions []report.Eviction `json:"evictions"`
			}
			readJSON(t, filepath.Join(whatifDir, c.name+".json"), &want)
			cl := whatifCluster(t, c.cluster)
			cfg, reg := defaultEngine(t)
			all := int32(100)
			cfg.PercentageOfNodesToScore = &all
			_, del := c.opts["delete"]
			_, force := c.opts["force"]
			_, preempt := c.opts["preempt"]
			rep, err := drain.Run(context.Background(), cl, drainNodes(t, cl, c.arg), drain.Options{Config: cfg, Registry: reg, Delete: del, Force: force, NoPreemption: !preempt})
			if err != nil {
				t.Fatal(err)
			}
			var evicted, replaced, wantPlaced, gotPlaced, wantPending, gotPending []string
			refused := map[string]string{}
			for _, m := range rep.Moves {
				evicted = append(evicted, m.Pod)
				replaced = append(replaced, m.Pod)
				if m.To != "" {
					gotPlaced = append(gotPlaced, m.Pod+" -> "+m.To)
				} else {
					gotPending = append(gotPending, m.Pod+": "+m.Reason)
				}
			}
			for _, l := range rep.Lost {
				evicted = append(evicted, l.Pod)
			}
			for _, n := range rep.Nodes {
				if !n.Drained {
					refused[n.Node] = n.Refusal
				}
			}
			for _, p := range want.Placements {
				wantPlaced = append(wantPlaced, p.Pod+" -> "+p.Node)
			}
			for _, u := range want.Unschedulable {
				wantPending = append(wantPending, u.Pod+": "+u.Message)
			}
			sorted := func(s []string) []string { s = append([]string(nil), s...); sort.Strings(s); return s }
			if d := cmp.Diff(sorted(want.Evicted), sorted(evicted)); d != "" {
				t.Errorf("evicted (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want.Refused, refused); d != "" {
				t.Errorf("refused nodes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(sorted(want.Replaced), sorted(replaced)); d != "" {
				t.Errorf("recreated (-want +got):\n%s", d)
			}
			if preempt {
				// kube's own loop binds asynchronously: the bindings are
				// recorded in the order they complete, not the order of
				// the decisions.
				wantPlaced, gotPlaced = sorted(wantPlaced), sorted(gotPlaced)
			}
			if d := cmp.Diff(wantPlaced, gotPlaced); d != "" {
				t.Errorf("placements (-want +got):\n%s", d)
			}
			if d := cmp.Diff(sorted(wantPending), sorted(gotPending)); d != "" {
				t.Errorf("left pending (-want +got):\n%s", d)
			}
			sortEv := func(e []report.Eviction) []report.Eviction {
				e = append([]report.Eviction{}, e...)
				sort.Slice(e, func(i, j int) bool { return e[i].Preemptor+e[i].Pod < e[j].Preemptor+e[j].Pod })
				return e
			}
			if d := cmp.Diff(sortEv(want.Evictions), sortEv(rep.Preempted)); d != "" {
				t.Errorf("preemption victims (-want +got):\n%s", d)
			}
		})
	}
}
