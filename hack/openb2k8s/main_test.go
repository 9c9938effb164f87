package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

func TestRunWritesTheList(t *testing.T) {
	out := filepath.Join(t.TempDir(), "openb.json")
	var stdout, stderr bytes.Buffer
	args := []string{"-nodes", "../../testdata/openb/openb_node_list_all_node.csv", "-pods", "../../testdata/openb/openb_pod_list_default.csv", "-limit", "400", "-output-file", out}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		APIVersion, Kind string
		Items            []struct{ Kind string }
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, it := range l.Items {
		kinds[it.Kind]++
	}
	if l.Kind != "List" || kinds["Namespace"] != 1 || kinds["Node"] != 1523 || kinds["Pod"] != 400 {
		t.Errorf("got %s with %v", l.Kind, kinds)
	}
	if got := stderr.String(); got != "openb2k8s: 1523 nodes, 400 pending pods\n" {
		t.Errorf("stderr %q", got)
	}
}

func TestRunWritesTheGPUMappings(t *testing.T) {
	for _, tt := range []struct {
		gpu  string
		want map[string]int
	}{
		{"gpushare", map[string]int{"Namespace": 1, "Node": 1213, "Pod": 400}},
		// One slice per GPU node, one template per GPU shape (num_gpu x
		// gpu_milli) of the first 400 rows, failed ones included.
		{"dra", map[string]int{"Namespace": 1, "Node": 1213, "Pod": 400, "DeviceClass": 1, "ResourceSlice": 1213, "ResourceClaimTemplate": 17}},
	} {
		t.Run(tt.gpu, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "openb.json")
			var stdout, stderr bytes.Buffer
			args := []string{"-nodes", "../../testdata/openb/openb_node_list_all_node.csv", "-pods", "../../testdata/openb/openb_pod_list_default.csv",
				"-gpu", tt.gpu, "-keep-failed", "-gpu-nodes-only", "-limit", "400", "-output-file", out}
			if code := run(args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var l struct{ Items []struct{ Kind string } }
			if err := json.Unmarshal(data, &l); err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, it := range l.Items {
				kinds[it.Kind]++
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", kinds, tt.want)
			}
		})
	}
}

func TestRunRejectsBadUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a missing file", []string{"-nodes", "nope.csv"}, "no such file"},
		{"a negative limit", []string{"-limit", "-1"}, "-limit must not be negative"},
		{"an unknown format", []string{"-nodes", "../../testdata/openb/openb_node_list_all_node.csv", "-pods", "../../testdata/openb/openb_pod_list_default.csv", "-limit", "1", "-o", "xml"}, `-o: unknown format "xml", want yaml or json`},
		{"a file for -o", []string{"-o", "out.yaml"}, `-o: unknown format "out.yaml", want yaml or json (-o is the format; the file is -output-file out.yaml)`},
		{"a stray argument", []string{"x"}, "unexpected arguments"},
		{"an unknown GPU mapping", []string{"-gpu", "mig"}, `-gpu: unsupported value "mig"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %d bytes; want 2 and %q", code, stderr.String(), stdout.Len(), tt.want)
			}
		})
	}
}

// TestDeparturesWriteATraceReplayReads writes the trace with departures and
// reads it back as `kubectl sched replay -f` does.
func TestDeparturesWriteATraceReplayReads(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace.yaml")
	var stdout, stderr bytes.Buffer
	args := []string{"-nodes", "../../testdata/openb/openb_node_list_all_node.csv", "-pods", "../../testdata/openb/openb_pod_list_default.csv", "-limit", "50", "-departures", "-output-file", out}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	cl, err := snapshot.LoadPaths([]string{out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := replay.FromCluster(cl)
	if err != nil {
		t.Fatal(err)
	}
	leaving := 0
	for _, p := range tr.Pods {
		if !p.Leave.IsZero() && p.Leave.After(p.Arrive) {
			leaving++
		}
	}
	if len(tr.Pods) != 50 || leaving != 50 || len(tr.Nodes) != 1523 {
		t.Errorf("got %d pods (%d leaving after they arrive) and %d nodes, want 50, 50 and 1523", len(tr.Pods), leaving, len(tr.Nodes))
	}
}
