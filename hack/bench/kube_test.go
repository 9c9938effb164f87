package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kubebench's output (hack/kubebench/main.go) is parsed into the figure
// `make bench` prints; anything else is an error, not zeros.
func TestParseKube(t *testing.T) {
	out := "pods=5000 scheduled=4881 duration=5m14.809s pods/s=15.9\n" +
		"cpu=2m27.785s pods/cpu-s=33.8\n" +
		"nodes=5000 bound=9000 load=12.3s heap_loaded=400.1MiB heap_per_node=80.2KiB heap_end=592.0MiB percentage=100 parallelism=16\n" +
		"heap_live=350.5MiB heap_live_peak=371.2MiB heap_clientset=120.5MiB heap_pending=30.5MiB\n"
	var f kubeFigure
	if err := parseKube(out, &f, true); err != nil {
		t.Fatal(err)
	}
	want := kubeFigure{Pods: 5000, Scheduled: 4881, Seconds: 314.809, PodsPerSec: 15.9, CPUSeconds: 147.785, PodsPerCPU: 33.8, HeapEndMiB: 592,
		HeapLiveMiB: 350.5, HeapLivePeakMiB: 371.2, HeapClientsetMiB: 120.5, HeapPendingMiB: 30.5}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("figure (-want +got):\n%s", diff)
	}
	if got := f.kubeHeapMiB(); got != 199.5 {
		t.Errorf("kube-scheduler's own heap = %v MiB, want 199.5 (live without the clientset's and kubebench's copies)", got)
	}
	if err := parseKube("kubebench: building the scheduler: boom\n", &f, true); err == nil {
		t.Error("no figures parsed without an error")
	}
	// A kubebench from before the live heap was measured: an error, not
	// a zero heap.
	old := strings.SplitAfter(out, "\n")
	if err := parseKube(strings.Join(old[:3], ""), &f, true); err == nil {
		t.Error("figures without the live heap parsed without an error")
	}
	// The -gang mode's figures have no live heap.
	gang := "groups=418 bound_members=3000 placements=3000 evictions=0 unschedulable=250\n" +
		"pods=3250 scheduled=3000 duration=1m40s pods/s=32.5\n" +
		"cpu=2m10s pods/cpu-s=25.0\n" +
		"nodes=5000 attempts=3400 heap_end=700.0MiB percentage=100 parallelism=16\n"
	var g kubeFigure
	if err := parseKube(gang, &g, false); err != nil {
		t.Fatal(err)
	}
	wantGang := kubeFigure{Pods: 3250, Scheduled: 3000, Seconds: 100, PodsPerSec: 32.5, CPUSeconds: 130, PodsPerCPU: 25, HeapEndMiB: 700}
	if diff := cmp.Diff(wantGang, g); diff != "" {
		t.Errorf("-gang figure (-want +got):\n%s", diff)
	}
}

// -record-heap keeps a recorded figure's speed and adds only the heaps;
// a workload not recorded yet is recorded whole.
func TestKubeFiguresPutHeap(t *testing.T) {
	var kf kubeFigures
	quiet := kubeFigure{Workload: "Mixed/5000Nodes", Percentage: 100, PodsPerCPU: 30, OursPodsPerCPU: 700, HeapEndMiB: 389, Date: "2026-12-04 12:24 UTC", Load: "0.1 0.1 0.1 -> 0.2 0.2 0.2", Commit: "abc"}
	kf.put(quiet)
	busy := kubeFigure{Workload: "Mixed/5000Nodes", Percentage: 100, PodsPerCPU: 12, OursPodsPerCPU: 300, HeapEndMiB: 500,
		HeapLiveMiB: 350, HeapLivePeakMiB: 370, HeapClientsetMiB: 120, HeapPendingMiB: 30, OursHeapLiveMiB: 110, OursHeapLivePeakMiB: 115,
		Date: "2026-12-04 14:00 UTC", Load: "9 9 9 -> 9 9 9", Commit: "def"}
	kf.putHeap(busy)
	kf.putHeap(kubeFigure{Workload: "Mixed/500Nodes", Percentage: 100, PodsPerCPU: 400, HeapLiveMiB: 40})
	want := quiet
	want.HeapLiveMiB, want.HeapLivePeakMiB, want.HeapClientsetMiB, want.HeapPendingMiB, want.OursHeapLiveMiB, want.OursHeapLivePeakMiB = 350, 370, 120, 30, 110, 115
	want.HeapDate = "2026-12-04 14:00 UTC (load 9 9 9 -> 9 9 9, commit def)"
	if got, _ := kf.lookup("Mixed/5000Nodes", 100); !cmp.Equal(got, want) {
		t.Errorf("Mixed/5000Nodes after -record-heap (-want +got):\n%s", cmp.Diff(want, got))
	}
	if got, ok := kf.lookup("Mixed/500Nodes", 100); !ok || got.PodsPerCPU != 400 || got.HeapLiveMiB != 40 {
		t.Errorf("a workload not recorded yet: %+v %v, want it recorded whole", got, ok)
	}
}

// Recorded figures are kept one per workload and percentage: a new run
// replaces the old one, and a lookup finds only its own percentage.
func TestKubeFiguresFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "figures.json")
	kf, err := readKubeFigures(path)
	if err != nil || len(kf.Figures) != 0 {
		t.Fatalf("missing file: %v, %v; want no figures and no error", kf, err)
	}
	kf.put(kubeFigure{Workload: "Mixed/5000Nodes", Percentage: 100, PodsPerCPU: 30})
	kf.put(kubeFigure{Workload: "Mixed/5000Nodes", Percentage: 0, PodsPerCPU: 50})
	kf.put(kubeFigure{Workload: "Mixed/5000Nodes", Percentage: 100, PodsPerCPU: 33, Load: "1.00 1.00 1.00 -> 2.00 2.00 2.00"})
	if err := kf.write(path); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), `"1.00 1.00 1.00 -> 2.00 2.00 2.00"`) {
		t.Errorf("the load is not written as read (%v):\n%s", err, data)
	}
	back, err := readKubeFigures(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Figures) != 2 {
		t.Fatalf("%d figures, want 2", len(back.Figures))
	}
	if f, ok := back.lookup("Mixed/5000Nodes", 100); !ok || f.PodsPerCPU != 33 {
		t.Errorf("Mixed/5000Nodes at 100%%: %v %v, want the later run (33)", f, ok)
	}
	if f, ok := back.lookup("Mixed/5000Nodes", 0); !ok || f.PodsPerCPU != 50 {
		t.Errorf("Mixed/5000Nodes adaptive: %v %v, want 50", f, ok)
	}
	if _, ok := back.lookup("Mixed/500Nodes", 100); ok {
		t.Error("a workload never recorded was found")
	}
}

func TestSelected(t *testing.T) {
	for _, tc := range []struct {
		name, only string
		want       bool
	}{
		{"Mixed/5000Nodes", "", true},
		{"Mixed/5000Nodes", "Mixed/5000", true},
		{"Mixed/15000Nodes", "Mixed/5000", false},
		{"SchedulingBasic/5000Nodes_10000Pods", "Mixed/5000,SchedulingBasic", true},
		{"snapshot/basic-small", "Mixed/5000,,SchedulingBasic", false},
	} {
		if got := selected(tc.name, tc.only); got != tc.want {
			t.Errorf("selected(%q, %q) = %v, want %v", tc.name, tc.only, got, tc.want)
		}
	}
}
