package dryrun

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const gangDir = "../../testdata/gang"

// runGang dry-runs a scenario of testdata/gang with Coscheduling enabled.
func runGang(t *testing.T, name string) *report.DryRun {
	t.Helper()
	cl, err := snapshot.LoadPaths([]string{filepath.Join(gangDir, name+".yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.LoadConfig(filepath.Join(gangDir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, cl, Options{Config: cfg, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	rep.Summary.DurationSeconds, rep.Summary.PodsPerSecond = 0, 0
	return rep
}

// TestGangScenarios compares the dry-run of each gang scenario, as JSON
// and as the wide table, with its golden files
// (testdata/gang/<name>.json, <name>.txt; -update rewrites them).
func TestGangScenarios(t *testing.T) {
	for _, name := range []string{"all-or-nothing", "timeout", "interleaved", "native"} {
		t.Run(name, func(t *testing.T) {
			rep := runGang(t, name)
			js, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var table bytes.Buffer
			if err := report.WriteDryRun(&table, rep, "wide"); err != nil {
				t.Fatal(err)
			}
			for ext, got := range map[string]string{".json": string(js) + "\n", ".txt": table.String()} {
				path := filepath.Join(gangDir, name+ext)
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/dryrun -update)", err)
				}
				if d := cmp.Diff(string(want), got); d != "" {
					t.Errorf("%s (-want +got):\n%s", path, d)
				}
			}
		})
	}
}

func gangPod(name, group, cpu string, created int64) *v1.Pod {
	return schedtest.MakePod(name).Namespace("jobs").Label(schedcore.PodGroupLabel, group).Req("cpu", cpu).Created(created).Obj()
}

func podGroup(name string, minMember int64, created string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": schedcore.CRDPodGroupAPIVersion, "kind": "PodGroup",
		"metadata": map[string]any{"name": name, "namespace": "jobs"},
		"spec":     map[string]any{"minMember": minMember},
	}}
	if created != "" {
		u.Object["metadata"].(map[string]any)["creationTimestamp"] = created
	}
	return u
}

func gangConfig(cfg *configv1.KubeSchedulerConfiguration) {
	cfg.Profiles[0].Plugins.MultiPoint.Enabled = append(cfg.Profiles[0].Plugins.MultiPoint.Enabled, configv1.Plugin{Name: names.Coscheduling})
	var kept []configv1.Plugin
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		if p.Name != names.PrioritySort {
			kept = append(kept, p)
		}
	}
	cfg.Profiles[0].Plugins.MultiPoint.Enabled = kept
}

func groupStatuses(r *report.DryRun) map[string]string {
	out := map[string]string{}
	for _, g := range r.Groups {
		out[g.Group] = fmt.Sprintf("%s %d/%d", g.Status, g.Scheduled, g.Pods)
	}
	return out
}

// TestInterleavedGangsDoNotDeadlock: two gangs that together do not fit
// never end both half placed; the one that fits alone completes, whatever
// the creation order of pods and PodGroups, and a gang stuck waiting
// within the 10% margin does not starve the next one.
func TestInterleavedGangsDoNotDeadlock(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
		pods  []*v1.Pod
		pgs   []*unstructured.Unstructured
		want  map[string]string
	}{
		{
			name:  "pods created alternately: the earlier group completes",
			nodes: 2,
			pods: []*v1.Pod{gangPod("a0", "a", "1", 0), gangPod("b0", "b", "1", 1), gangPod("a1", "a", "1", 2),
				gangPod("b1", "b", "1", 3), gangPod("a2", "a", "1", 4), gangPod("b2", "b", "1", 5)},
			pgs:  []*unstructured.Unstructured{podGroup("a", 3, ""), podGroup("b", 3, "")},
			want: map[string]string{"jobs/a": "Scheduled 3/3", "jobs/b": "Unschedulable 0/3"},
		},
		{
			name:  "the PodGroup created first goes first even if its pods come later",
			nodes: 2,
			pods: []*v1.Pod{gangPod("a0", "a", "1", 0), gangPod("b0", "b", "1", 1), gangPod("a1", "a", "1", 2),
				gangPod("b1", "b", "1", 3), gangPod("a2", "a", "1", 4), gangPod("b2", "b", "1", 5)},
			pgs:  []*unstructured.Unstructured{podGroup("a", 3, "2026-01-01T00:00:10Z"), podGroup("b", 3, "2026-01-01T00:00:05Z")},
			want: map[string]string{"jobs/a": "Unschedulable 0/3", "jobs/b": "Scheduled 3/3"},
		},
		{
			name:  "a gang that cannot fit only the other one's room does not take it",
			nodes: 2,
			// a needs 4 of 4 CPUs but b (earlier) takes 2: a is rejected
			// whole and b stays placed.
			pods: []*v1.Pod{gangPod("b0", "b", "1", 0), gangPod("a0", "a", "1", 1), gangPod("b1", "b", "1", 2),
				gangPod("a1", "a", "1", 3), gangPod("a2", "a", "1", 4), gangPod("a3", "a", "1", 5)},
			pgs:  []*unstructured.Unstructured{podGroup("a", 4, ""), podGroup("b", 2, "")},
			want: map[string]string{"jobs/a": "Unschedulable 0/4", "jobs/b": "Scheduled 2/2"},
		},
		{
			name:  "a gang waiting within the 10% margin until its timeout does not starve the next",
			nodes: 3,
			// a: ten 1300m members, nine fit (three per 4-CPU node) and wait
			// for the tenth until the timeout; b (two 2-CPU members) fails
			// meanwhile, then completes once a has released everything.
			pods: append(func() []*v1.Pod {
				var ps []*v1.Pod
				for i := 0; i < 10; i++ {
					ps = append(ps, gangPod(fmt.Sprintf("a%d", i), "a", "1300m", int64(i)))
				}
				return ps
			}(), gangPod("b0", "b", "2", 20), gangPod("b1", "b", "2", 21)),
			pgs:  []*unstructured.Unstructured{podGroup("a", 10, ""), podGroup("b", 2, "")},
			want: map[string]string{"jobs/a": "Unschedulable 0/10", "jobs/b": "Scheduled 2/2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := &snapshot.Cluster{Pods: tt.pods, Others: tt.pgs}
			for i := 0; i < tt.nodes; i++ {
				name := fmt.Sprintf("n%d", i)
				cl.Nodes = append(cl.Nodes, schedtest.MakeNode(name).Label("kubernetes.io/hostname", name).Capacity("cpu", map[int]string{2: "2", 3: "4"}[tt.nodes], "memory", "16Gi", "pods", "110").Obj())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg, err := engine.LoadConfig("")
			if err != nil {
				t.Fatal(err)
			}
			gangConfig(cfg)
			reg, err := engine.Registry(nil)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(ctx, cl, Options{Config: cfg, Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, groupStatuses(rep)); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			// Nothing of an unplaced gang stays counted.
			var placedCPU int64
			for _, p := range rep.Placements {
				for _, pod := range tt.pods {
					if "jobs/"+pod.Name == p.Pod {
						placedCPU += pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
					}
				}
			}
			var used int64
			for _, n := range rep.Nodes {
				used += n.After["cpu"]
			}
			if used != placedCPU {
				t.Errorf("nodes count %dm CPU after the run, the placed pods %dm", used, placedCPU)
			}
		})
	}
}
