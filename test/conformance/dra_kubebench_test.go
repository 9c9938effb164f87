package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// TestKubebenchDRAPlaceRuns compares the dry-run, placement by placement
// and message by message, with the real kube-scheduler's on generated DRA
// GPU clusters (testdata/kubebench/dra-*.place.json, recorded by
// hack/kubebench on `go run ./hack/gensnap -w NAME -seed SEED`).
func TestKubebenchDRAPlaceRuns(t *testing.T) {
	cases := []struct {
		workload string
		seed     uint64
		place    string
	}{
		{"DRA/150Nodes", 2, "dra-150nodes-seed2.place.json"},
		{"DRA/500Nodes", 1, "dra-500nodes.place.json"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.place), func(t *testing.T) {
			cl, err := generatedDRA(c.workload, c.seed)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join("../../testdata/kubebench", c.place))
			if err != nil {
				t.Fatal(err)
			}
			var want placeFile
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if len(want.Placements) == 0 || len(want.Unschedulable) == 0 {
				t.Fatalf("a weak reference: %d placed, %d unschedulable", len(want.Placements), len(want.Unschedulable))
			}
			comparePlaceRun(t, &fixture{cluster: cl, place: want}, "")
		})
	}
}

// generatedDRA is a generated workload (with its DRA objects, if any), as
// gensnap writes it.
func generatedDRA(name string, seed uint64) (*snapshot.Cluster, error) {
	w, err := workload.Generate(name, workload.Params{Seed: seed})
	if err != nil {
		return nil, err
	}
	cl := &snapshot.Cluster{Namespaces: w.Namespaces, Nodes: w.Nodes, Services: w.Services}
	cl.Pods = append(append(cl.Pods, w.Existing...), w.Pending...)
	if d := w.DRA; d != nil {
		cl.DRA = snapshot.DRA{DeviceClasses: d.Classes, ResourceSlices: d.Slices, DeviceTaintRules: d.TaintRules, ResourceClaimTemplates: d.Templates, ResourceClaims: d.Claims}
	}
	return cl, nil
}
