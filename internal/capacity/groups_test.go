package capacity

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

func gates(generic, topology bool) schedcore.Features {
	f := schedcore.DefaultFeatures
	f.GenericWorkload, f.TopologyAwareWorkloadScheduling = generic, topology
	return f
}

func writeSpec(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A gang of 5 three-GPU workers whose minCount (2) is below its members:
// the example's nodes hold 12 such pods, so two copies fit and the third
// binds the 2 members left room (its quorum), which kube binds: the copy
// still does not count.
const quorumGang = `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: q, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: q, namespace: ml}
spec:
  parallelism: 5
  template:
    spec:
      restartPolicy: Never
      schedulingGroup: {podGroupName: q}
      containers: [{name: c, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "3"}, limits: {nvidia.com/gpu: "3"}}}]
`

// A Workload of two gangs: 2 workers of 4 GPUs and 1 of 8 GPUs, both in
// one rack.
const twoGroupWorkload = `apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ml}
spec:
  podGroupTemplates:
  - {name: a, schedulingPolicy: {gang: {minCount: 2}}, schedulingConstraints: {topology: [{key: topology.example.com/rack}]}}
  - {name: b, schedulingPolicy: {basic: {}}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: w-a, namespace: ml}
spec: {workloadRef: {workloadName: w, templateName: a}, schedulingPolicy: {gang: {minCount: 2}}, schedulingConstraints: {topology: [{key: topology.example.com/rack}]}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: w-b, namespace: ml}
spec: {workloadRef: {workloadName: w, templateName: b}, schedulingPolicy: {basic: {}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: wa, namespace: ml}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      schedulingGroup: {podGroupName: w-a}
      containers: [{name: c, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: wb, namespace: ml}
spec:
  schedulingGroup: {podGroupName: w-b}
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}}]
`

// A gang of two pods each with a claim of one GPU made from
// examples/dra.yaml's ResourceClaimTemplate: its node has two free.
const draGang = `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: d, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: d, namespace: ml}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      schedulingGroup: {podGroupName: d}
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
`

// The count of a spec scheduled by the pod-group cycle is what the
// engine's dry run places when the cluster is given that many copies and
// one more, all pending at once, as kube-scheduler would be: the first
// count copies bind whole, member by member on the same nodes, and the
// next binds exactly the members capacity reports for it.
func TestPodGroupCycleCountIsWhatDryrunPlaces(t *testing.T) {
	tests := []struct {
		name      string
		cluster   string
		spec      string
		features  schedcore.Features
		wantCount int
		// wantBound is the next copy's bound members, group by group.
		wantBound []int
		wantStop  string
		// sequential submits the dry run's copies one after another, each
		// run before the next (capacity's order), rather than all at
		// once: a Workload's groups of different copies are otherwise
		// interleaved by the queue.
		sequential bool
	}{
		{name: "a gang of 4 four-GPU workers, no topology: 48 free GPUs take 3", cluster: "../../examples/gang-cluster.yaml", spec: "../../examples/workload.yaml",
			features: gates(true, false), wantCount: 3, wantBound: []int{0}, wantStop: "minCount (4) cannot be satisfied"},
		{name: "the same gang in one rack: 24 GPUs a rack take 1 each", cluster: "../../examples/gang-cluster.yaml", spec: "../../examples/workload.yaml",
			features: gates(true, true), wantCount: 2, wantBound: []int{0}, wantStop: "pod group is unschedulable, 0/2 placements are available"},
		{name: "a gang whose quorum is met binds part of the copy that stops the count", cluster: "../../examples/gang-cluster.yaml", spec: quorumGang,
			features: gates(true, false), wantCount: 2, wantBound: []int{2}},
		{name: "a Workload of two groups counts when both bind", cluster: "../../examples/gang-cluster.yaml", spec: twoGroupWorkload,
			features: gates(true, true), wantCount: 3, sequential: true},
		{name: "a gang whose members' claims come from a template: one copy takes both GPUs", cluster: "../../examples/dra.yaml", spec: draGang,
			features: gates(true, false), wantCount: 1, wantBound: []int{0}},
		{name: "a CPU gang with a hard hostname spread (the kubebench case) on the example cluster", cluster: "../../examples/cluster.yaml", spec: "../../testdata/kubebench/whatif/gang-native-4.yaml",
			features: gates(true, false), wantCount: 5, wantBound: []int{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specPath := tc.spec
			if strings.Contains(specPath, "\n") {
				specPath = writeSpec(t, specPath)
			}
			cl, err := snapshot.LoadPaths([]string{tc.cluster}, nil)
			if err != nil {
				t.Fatal(err)
			}
			specs, err := LoadSpecsFor([]string{specPath}, nil, "", cl, tc.features)
			if err != nil {
				t.Fatal(err)
			}
			if !specs[0].PodGroupCycle() {
				t.Fatalf("spec %s is not scheduled by the pod-group cycle", specs[0].Name)
			}
			cfg, err := engine.LoadConfigWithFeatures("", tc.features)
			if err != nil {
				t.Fatal(err)
			}
			reg, _ := engine.Registry(nil)
			got := map[string]string{}
			rep, err := Run(context.Background(), cl, specs, Options{Config: cfg, Registry: reg, Features: tc.features, Nearest: -1,
				Placed: func(_, pod, node string) { got[pod] = node }})
			if err != nil {
				t.Fatal(err)
			}
			s := rep.Specs[0]
			if s.Count != tc.wantCount || s.Cycle != "pod-group" || s.LimitedBy != report.LimitedByFit {
				t.Fatalf("count %d (%s, cycle %q), want %d; stopped by %q", s.Count, s.LimitedBy, s.Cycle, tc.wantCount, s.StoppedBy)
			}
			if !strings.Contains(s.StoppedBy, tc.wantStop) {
				t.Errorf("stopped by %q, want it to contain %q", s.StoppedBy, tc.wantStop)
			}
			if tc.wantBound != nil {
				var bound []int
				for _, o := range s.NextCopy {
					bound = append(bound, o.Bound)
				}
				if diff := cmp.Diff(tc.wantBound, bound); diff != "" {
					t.Errorf("next copy's bound members (-want +got):\n%s", diff)
				}
				if slices.Max(tc.wantBound) > 0 && !strings.Contains(rep.Leftover.Note, "members of ml/") {
					t.Errorf("leftover note %q does not say it holds the next copy's bound members", rep.Leftover.Note)
				}
			}

			// The dry run: count+1 copies, all pending, named as capacity
			// names them.
			dry := *cl
			dry.Pods = nil
			for _, p := range cl.Pods {
				if p.Spec.NodeName != "" {
					dry.Pods = append(dry.Pods, p)
				}
			}
			dry.Workloads.PodGroups = slices.Clip(dry.Workloads.PodGroups)
			members := map[string]int{}
			for i := 1; i <= tc.wantCount+1; i++ {
				for _, g := range specs[0].gangs() {
					pg := g.PodGroup.DeepCopy()
					pg.Name = fmt.Sprintf("%s-%d", pg.Name, i)
					pg.UID = types.UID("dry-" + pg.Name)
					pg.ResourceVersion = "1"
					dry.Workloads.PodGroups = append(dry.Workloads.PodGroups, pg)
					for j, m := range g.Members {
						p := m.DeepCopy()
						p.Name = fmt.Sprintf("%s-%d", pg.Name, j)
						p.UID = types.UID("dry-" + p.Name)
						name := pg.Name
						p.Spec.SchedulingGroup.PodGroupName = &name
						dry.Pods = append(dry.Pods, p)
						members[pg.Name]++
					}
				}
			}
			placed := map[string]string{}
			off, pending, err := engine.NewOffline(context.Background(), &dry, engine.Options{Config: cfg, Registry: reg, Features: tc.features},
				engine.Observer{Placed: func(p *v1.Pod, node string, _ int, _ schedruntime.ScheduleResult) {
					placed[p.Namespace+"/"+p.Name] = node
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer off.Close()
			if tc.sequential {
				for i := 1; i <= tc.wantCount+1; i++ {
					var batch []*v1.Pod
					for _, p := range pending {
						for _, g := range specs[0].gangs() {
							if strings.HasPrefix(p.Name, fmt.Sprintf("%s-%d-", g.PodGroup.Name, i)) {
								batch = append(batch, p)
							}
						}
					}
					off.Submit(batch...)
					if err := off.Run(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				off.Submit(pending...)
				if err := off.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			boundPer := map[string]int{}
			for pod := range placed {
				name := pod[strings.Index(pod, "/")+1 : strings.LastIndex(pod, "-")]
				boundPer[name]++
			}
			whole := 0
			for g, n := range members {
				if boundPer[g] == n {
					whole++
				}
			}
			// Copies are whole Workloads: a Workload copy counts when every
			// group of it is bound whole.
			wholeCopies := 0
			for i := 1; i <= tc.wantCount+1; i++ {
				ok := true
				for _, g := range specs[0].gangs() {
					name := fmt.Sprintf("%s-%d", g.PodGroup.Name, i)
					ok = ok && boundPer[name] == members[name]
				}
				if ok {
					wholeCopies++
				}
			}
			if wholeCopies != tc.wantCount {
				t.Errorf("dry run bound %d copies whole (%d groups whole; bound per group %v), capacity counted %d", wholeCopies, whole, boundPer, tc.wantCount)
			}
			firstCopies := map[string]string{}
			for pod, node := range placed {
				var i int
				name := pod[strings.Index(pod, "/")+1 : strings.LastIndex(pod, "-")]
				if _, err := fmt.Sscanf(name[strings.LastIndex(name, "-")+1:], "%d", &i); err == nil && i <= tc.wantCount {
					firstCopies[pod] = node
				}
			}
			if diff := cmp.Diff(firstCopies, got); diff != "" {
				t.Errorf("the first %d copies' members: dry run (-) and capacity (+) differ:\n%s", tc.wantCount, diff)
			}
			for gi, o := range s.NextCopy {
				name := fmt.Sprintf("%s-%d", specs[0].gangs()[gi].PodGroup.Name, tc.wantCount+1)
				if o.Bound != boundPer[name] {
					t.Errorf("next copy's group %s: capacity says %d bound, dry run bound %d", name, o.Bound, boundPer[name])
				}
			}
		})
	}
}

// Bad input is one line at the object, wrapping ErrNotASpec (exit 2).
func TestPodGroupSpecsRefuseWhatKubeWouldNeverSchedule(t *testing.T) {
	job := func(group string, n int) string {
		return fmt.Sprintf("---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ml}\nspec:\n  parallelism: %d\n  template:\n    spec:\n      restartPolicy: Never\n      schedulingGroup: {podGroupName: %s}\n      %s\n", n, group, container)
	}
	pg := "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: 3}}}\n"
	tests := []struct {
		name     string
		spec     string
		features schedcore.Features
		want     string
	}{
		{name: "a PodGroup without pods", spec: pg, features: gates(true, false),
			want: "PodGroup ml/g: no pods of the group among the specs"},
		{name: "a pod naming a missing group", spec: pg + job("other", 3), features: gates(true, false),
			want: "Job ml/j names PodGroup ml/other, which is not among the specs"},
		{name: "minCount above the members", spec: pg + job("g", 2), features: gates(true, false),
			want: `PodGroup ml/g: spec.schedulingPolicy.gang.minCount 3 is above its 2 pods among the specs: kube-scheduler never schedules it (GangScheduling: "waiting for minCount pods from a gang to appear in scheduling queue")`},
		{name: "a v1alpha1 scheduling.k8s.io PodGroup", spec: strings.Replace(pg, "v1beta1", "v1alpha1", 1) + job("g", 3), features: gates(true, false),
			want: "apiVersion scheduling.k8s.io/v1alpha1 is not read: kube-scheduler v1.37 schedules PodGroups of scheduling.k8s.io/v1beta1"},
		{name: "a Workload with the gate off", spec: "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec: {podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}]}\n", features: gates(false, false),
			want: "the Workload API needs the GenericWorkload feature gate"},
		{name: "a Workload no PodGroup names", spec: "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec: {podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}]}\n", features: gates(true, false),
			want: "Workload team/w: no PodGroup among the specs names it"},
		{name: "an invalid PodGroup, in the API server's words", spec: strings.Replace(pg, "minCount: 3", "minCount: 0", 1) + job("g", 3), features: gates(true, false),
			want: "spec.schedulingPolicy.gang.minCount"},
		{name: "a PodGroup's own claims", spec: strings.Replace(pg, "spec: {", "spec: {resourceClaims: [{name: c, resourceClaimTemplateName: t}], ", 1) + job("g", 3), features: gates(true, false),
			want: "a PodGroup's own claims (DRAWorkloadResourceClaims) are not simulated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSpecsFor([]string{writeSpec(t, tc.spec)}, nil, "team", nil, tc.features)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tc.want)
			}
			if !errors.Is(err, ErrNotASpec) && !errors.Is(err, snapshot.ErrInvalid) {
				t.Errorf("error %v is neither ErrNotASpec nor snapshot.ErrInvalid (exit 2)", err)
			}
		})
	}
}

// With GenericWorkload off a native PodGroup is still a Coscheduling gang
// (today's behaviour); with it on the same file is the pod-group cycle's.
func TestTheGateChoosesTheGangsCycle(t *testing.T) {
	path := "../../testdata/kubebench/whatif/gang-native-4.yaml"
	for _, tc := range []struct {
		generic bool
		cycle   bool
	}{{false, false}, {true, true}} {
		specs, err := LoadSpecsFor([]string{path}, nil, "", nil, gates(tc.generic, false))
		if err != nil {
			t.Fatal(err)
		}
		if got := specs[0].PodGroupCycle(); got != tc.cycle {
			t.Errorf("GenericWorkload=%v: pod-group cycle %v, want %v", tc.generic, got, tc.cycle)
		}
	}
	specs, err := LoadSpecsFor([]string{path}, nil, "", nil, gates(false, false))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := snapshot.LoadPaths([]string{"../../examples/cluster.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, reg := defaults(t, "")
	if _, err := Run(context.Background(), cl, specs, Options{Config: cfg, Registry: reg, Nearest: -1}); !errors.Is(err, ErrNoCoscheduling) {
		t.Errorf("gate off, default profile: %v, want ErrNoCoscheduling", err)
	}
}
