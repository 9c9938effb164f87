package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

func TestAddRunProfile(t *testing.T) {
	cfg, err := LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	AddRunProfile(cfg)
	if len(cfg.Profiles) != 2 || *cfg.Profiles[0].SchedulerName != v1.DefaultSchedulerName || *cfg.Profiles[1].SchedulerName != RunSchedulerName {
		t.Fatalf("profiles %v, want default-scheduler and kubectl-sched", profileNames(cfg.Profiles))
	}
	// The same plugins and args, apart from the name.
	run := cfg.Profiles[1].DeepCopy()
	run.SchedulerName = cfg.Profiles[0].SchedulerName
	if d := cmp.Diff(cfg.Profiles[0], *run); d != "" {
		t.Errorf("run's profile differs from the default one (-default +run):\n%s", d)
	}
	// Twice changes nothing.
	AddRunProfile(cfg)
	if len(cfg.Profiles) != 2 {
		t.Errorf("profiles %v after a second AddRunProfile", profileNames(cfg.Profiles))
	}
}

func TestUnservedWarnings(t *testing.T) {
	cfg, err := LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, scheduler, node string, phase v1.PodPhase, deleting bool) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: v1.PodSpec{SchedulerName: scheduler, NodeName: node}, Status: v1.PodStatus{Phase: phase}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	cl := &snapshot.Cluster{Pods: []*v1.Pod{
		pod("served", v1.DefaultSchedulerName, "", "", false),
		pod("x-1", "x", "", v1.PodPending, false),
		pod("x-2", "x", "", "", false),
		pod("x-bound", "x", "n1", v1.PodRunning, false),
		pod("x-done", "x", "", v1.PodSucceeded, false),
		pod("x-failed", "x", "", v1.PodFailed, false),
		pod("x-deleting", "x", "", "", true),
		pod("a-1", "a", "", "", false),
	}}
	want := []string{
		`warning: 1 pending pod for scheduler "a" skipped: no profile of that name (profiles: default-scheduler)`,
		`warning: 2 pending pods for scheduler "x" skipped: no profile of that name (profiles: default-scheduler)`,
	}
	if d := cmp.Diff(want, UnservedWarnings(cl, cfg)); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

func profileNames(ps []configv1.KubeSchedulerProfile) []string {
	var out []string
	for _, p := range ps {
		out = append(out, *p.SchedulerName)
	}
	return out
}
