package dryrun

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestPodGroupsReport: with GenericWorkload the report lists each
// Workload API PodGroup with pending members, the members bound and not,
// and the PodGroupInitiallyScheduled condition in kube's words (the
// kubebench references' snapshots, with kube's PodGroupPostFilter tail);
// gates off, no such section.
func TestPodGroupsReport(t *testing.T) {
	gw := schedcore.DefaultFeatures
	gw.GenericWorkload = true
	tests := []struct {
		name     string
		file     string
		features schedcore.Features
		want     []report.PodGroup
	}{
		{"a gang of 3 where 2 fit binds none", "gang-kube-blocked", gw, []report.PodGroup{{
			PodGroup: "default/pg1", Policy: "gang", MinCount: 3, Bound: []string{}, Unbound: []string{"default/p1", "default/p2", "default/p3"},
			Condition: &report.PodGroupCondition{Status: "False", Reason: "Unschedulable", Message: "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"},
		}}},
		{"minCount 3 of 4: 3 bind, the condition stays True", "gang-kube-mincount", gw, []report.PodGroup{{
			PodGroup: "default/pg1", Policy: "gang", MinCount: 3, Bound: []string{"default/p1", "default/p2", "default/p3"}, Unbound: []string{"default/p4"},
			Condition: &report.PodGroupCondition{Status: "True", Reason: "Scheduled"},
		}}},
		{"gates off", "gang-kube-blocked", schedcore.DefaultFeatures, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, err := snapshot.LoadPaths([]string{"../../testdata/kubebench/" + tt.file + ".yaml"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := Run(ctx, cl, Options{Features: tt.features})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, rep.PodGroups); diff != "" {
				t.Errorf("podGroups (-want +got):\n%s", diff)
			}
			var out, js bytes.Buffer
			if err := report.WriteDryRun(&out, rep, "wide"); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out.String(), "Pod groups:"); got != (tt.want != nil) {
				t.Errorf("text has a Pod groups section: %v, want %v:\n%s", got, tt.want != nil, out.String())
			}
			for _, g := range tt.want {
				if c := g.Condition; c != nil && !strings.Contains(out.String(), c.Reason) {
					t.Errorf("text lacks %s's reason %q:\n%s", g.PodGroup, c.Reason, out.String())
				}
			}
			if err := report.WriteDryRun(&js, rep, "json"); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(js.String(), `"podGroups"`); got != (tt.want != nil) {
				t.Errorf("JSON has podGroups: %v, want %v", got, tt.want != nil)
			}
		})
	}
}
