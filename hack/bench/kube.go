package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The kube-scheduler side of `make bench`: the real kube-scheduler v1.37.2
// framework (hack/kubebench) on the same snapshot, for the ratio column.
//
// -kube run places each workload with kubebench right after our runs, on
// the same snapshot file (the same generator and seed), so both see the
// machine's load of the same minutes. -kube recorded (the default) reads
// kube's figures from kubeFiguresFile, recorded that way with their date,
// load and commit by `make bench-kube` (kube needs minutes per 5000-node
// workload). -kube off prints our figures only.

// kubeFiguresFile holds kube-scheduler's recorded figures (relative to the
// repository root, where `make bench` runs).
const kubeFiguresFile = "hack/bench/kubebench-figures.json"

// kubeFigures is that file.
type kubeFigures struct {
	Comment string       `json:"comment"`
	Figures []kubeFigure `json:"figures"`
}

// kubeFigure is one kubebench run of one workload, and ours beside it.
type kubeFigure struct {
	Workload   string `json:"workload"`
	Percentage int    `json:"percentage"`
	// Kube's run.
	Pods       int     `json:"pods"`
	Scheduled  int     `json:"scheduled"`
	PodsPerSec float64 `json:"podsPerSecond"`
	PodsPerCPU float64 `json:"podsPerCPUSecond"`
	HeapEndMiB float64 `json:"heapEndMiB"`
	// The live heap after the last pod (after forced collections), the
	// largest live heap a collection found during the run, and the fake
	// clientset's copy of the objects within both (the API server's,
	// which a kube-scheduler process does not hold). Zero: recorded
	// before kubebench measured them.
	HeapLiveMiB      float64 `json:"heapLiveMiB,omitempty"`
	HeapLivePeakMiB  float64 `json:"heapLivePeakMiB,omitempty"`
	HeapClientsetMiB float64 `json:"heapClientsetMiB,omitempty"`
	// HeapPendingMiB is kubebench's own decoded copy of the pending pods
	// within the live heap (it hands them to the scheduler one by one; a
	// kube-scheduler takes them from its informers).
	HeapPendingMiB float64 `json:"heapPendingMiB,omitempty"`
	// HeapDate is when the heap figures were recorded, when they were
	// recorded apart from the rest (bench -record-heap).
	HeapDate   string  `json:"heapDate,omitempty"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// Ours, run just before on the same snapshot.
	OursPodsPerCPU float64 `json:"oursPodsPerCPUSecond"`
	OursHeapMiB    float64 `json:"oursHeapMiB,omitempty"`
	// Our live heap after the last pod and its peak, measured as kube's.
	OursHeapLiveMiB     float64 `json:"oursHeapLiveMiB,omitempty"`
	OursHeapLivePeakMiB float64 `json:"oursHeapLivePeakMiB,omitempty"`
	// When and where.
	Date   string `json:"date"`
	Load   string `json:"load"`
	Commit string `json:"commit"`
	Cores  int    `json:"cores"`
}

func (f kubeFigure) key() string { return fmt.Sprintf("%s@%d", f.Workload, f.Percentage) }

// kubeHeapMiB is kube-scheduler's own live heap: kubebench's without the
// fake clientset's copy of the objects and its own copy of the pending
// pods; 0 if not recorded.
func (f kubeFigure) kubeHeapMiB() float64 {
	if f.HeapLiveMiB == 0 {
		return 0
	}
	return f.HeapLiveMiB - f.HeapClientsetMiB - f.HeapPendingMiB
}

func readKubeFigures(path string) (*kubeFigures, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &kubeFigures{}, nil
	}
	if err != nil {
		return nil, err
	}
	var kf kubeFigures
	if err := json.Unmarshal(data, &kf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &kf, nil
}

func (kf *kubeFigures) lookup(workload string, pct int) (kubeFigure, bool) {
	k := kubeFigure{Workload: workload, Percentage: pct}.key()
	for _, f := range kf.Figures {
		if f.key() == k {
			return f, true
		}
	}
	return kubeFigure{}, false
}

// put replaces the figure of the same workload and percentage, or adds it.
func (kf *kubeFigures) put(f kubeFigure) {
	for i := range kf.Figures {
		if kf.Figures[i].key() == f.key() {
			kf.Figures[i] = f
			return
		}
	}
	kf.Figures = append(kf.Figures, f)
	sort.Slice(kf.Figures, func(i, j int) bool { return kf.Figures[i].key() < kf.Figures[j].key() })
}

// putHeap records only the live heaps of f (kube's and ours) in the figure
// of the same workload and percentage, keeping its other figures (speed
// recorded on a quiet machine); a workload not recorded yet is recorded
// whole.
func (kf *kubeFigures) putHeap(f kubeFigure) {
	for i := range kf.Figures {
		g := &kf.Figures[i]
		if g.key() == f.key() {
			g.HeapLiveMiB, g.HeapLivePeakMiB, g.HeapClientsetMiB, g.HeapPendingMiB = f.HeapLiveMiB, f.HeapLivePeakMiB, f.HeapClientsetMiB, f.HeapPendingMiB
			g.OursHeapLiveMiB, g.OursHeapLivePeakMiB = f.OursHeapLiveMiB, f.OursHeapLivePeakMiB
			g.HeapDate = f.Date + " (load " + f.Load + ", commit " + f.Commit + ")"
			return
		}
	}
	kf.put(f)
}

func (kf *kubeFigures) write(path string) error {
	kf.Comment = "kube-scheduler v1.37.2 (hack/kubebench) on the snapshots of hack/bench, recorded by `make bench-kube`; " +
		"load is /proc/loadavg (1, 5, 15 min) before and after the kube run; commit is this repository's when the run started (our engine and the snapshot generator)"
	// Not HTML-escaped: the load reads "a b c -> d e f".
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(kf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

var (
	reKubePods = regexp.MustCompile(`pods=(\d+) scheduled=(\d+) duration=(\S+) pods/s=([\d.]+)`)
	reKubeCPU  = regexp.MustCompile(`cpu=(\S+) pods/cpu-s=([\d.]+)`)
	reKubeHeap = regexp.MustCompile(`heap_end=([\d.]+)MiB`)
	reKubeLive = regexp.MustCompile(`heap_live=([\d.]+)MiB heap_live_peak=([\d.]+)MiB heap_clientset=([\d.]+)MiB heap_pending=([\d.]+)MiB`)
)

// runKube runs hack/kubebench/run.sh on a snapshot file and parses what it
// prints. With gates (a workload of kube's Workload API), kubebench runs
// kube's own loop with them (-gang, once), pod-group cycle included, and
// bound is its placements (pod "ns/name" to node), to compare with ours
// (sameDecisions).
func runKube(snapshotPath, config string, pct int, gates string) (f kubeFigure, bound map[string]string, err error) {
	args := []string{snapshotPath}
	if config != "" {
		args = append(args, config)
	}
	cmd := exec.Command("hack/kubebench/run.sh", args...)
	cmd.Env = append(os.Environ(), "PERCENTAGE="+strconv.Itoa(pct))
	if gates != "" {
		out, err := os.CreateTemp("", "bench-gang-*.json")
		if err != nil {
			return kubeFigure{}, nil, err
		}
		_ = out.Close()
		defer os.Remove(out.Name())
		defer func() {
			bound = readGangBound(out.Name())
			if kubeGangOut != "" && err == nil {
				err = copyFile(out.Name(), kubeGangOut)
			}
		}()
		cmd.Env = append(cmd.Env, "KUBEBENCH_FLAGS="+strings.TrimSpace(os.Getenv("KUBEBENCH_FLAGS")+" -gang "+out.Name()+" -gang-runs 1 -gang-until-decided -feature-gates "+gates))
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	f = kubeFigure{Percentage: pct, Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), Cores: runtime.NumCPU()}
	before := loadAvg()
	if err = cmd.Run(); err != nil {
		return f, nil, fmt.Errorf("hack/kubebench/run.sh %s: %w", strings.Join(args, " "), err)
	}
	f.Load = before + " -> " + loadAvg()
	if err = parseKube(out.String(), &f, gates == ""); err != nil {
		return f, nil, err
	}
	f.Commit = startCommit
	return f, nil, nil
}

// parseKube reads kubebench's figures from what it printed; live: the
// live-heap line must be there (the placement mode prints it, the -gang
// mode does not).
func parseKube(s string, f *kubeFigure, live bool) error {
	m := reKubePods.FindStringSubmatch(s)
	c := reKubeCPU.FindStringSubmatch(s)
	h := reKubeHeap.FindStringSubmatch(s)
	l := reKubeLive.FindStringSubmatch(s)
	if m == nil || c == nil || h == nil || (live && l == nil) {
		return fmt.Errorf("kubebench printed no figures: %q", s)
	}
	f.Pods, _ = strconv.Atoi(m[1])
	f.Scheduled, _ = strconv.Atoi(m[2])
	if d, err := time.ParseDuration(m[3]); err == nil {
		f.Seconds = d.Seconds()
	}
	f.PodsPerSec, _ = strconv.ParseFloat(m[4], 64)
	if d, err := time.ParseDuration(c[1]); err == nil {
		f.CPUSeconds = d.Seconds()
	}
	f.PodsPerCPU, _ = strconv.ParseFloat(c[2], 64)
	f.HeapEndMiB, _ = strconv.ParseFloat(h[1], 64)
	if l == nil {
		// The -gang mode measures no live heap.
		return nil
	}
	f.HeapLiveMiB, _ = strconv.ParseFloat(l[1], 64)
	f.HeapLivePeakMiB, _ = strconv.ParseFloat(l[2], 64)
	f.HeapClientsetMiB, _ = strconv.ParseFloat(l[3], 64)
	f.HeapPendingMiB, _ = strconv.ParseFloat(l[4], 64)
	return nil
}

// loadAvg is the machine's 1, 5 and 15 minute load averages.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	fs := strings.Fields(string(data))
	if len(fs) < 3 {
		return "?"
	}
	return strings.Join(fs[:3], " ")
}

// startCommit is the repository's commit when the run started, the source
// `go run` built ("+changes": with uncommitted changes). Read once: a
// commit made during a long run is not what runs.
var startCommit = gitCommit()

func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "+changes"
	}
	return c
}

// tempSnapshot writes a workload's snapshot to a temporary file for
// kubebench.
func tempSnapshot(w workload) (string, func(), error) {
	if w.file != "" {
		return w.file, func() {}, nil
	}
	data, err := w.marshal()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(dir, "snapshot.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return p, func() { _ = os.RemoveAll(dir) }, nil
}

// kubeGangOut is the -kube-gang-out flag.
var kubeGangOut string

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

// readGangBound reads the placements of kubebench -gang's output file (nil
// if it cannot).
func readGangBound(path string) map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var res struct {
		Placements []struct{ Pod, Node string } `json:"placements"`
	}
	if json.Unmarshal(data, &res) != nil {
		return nil
	}
	out := make(map[string]string, len(res.Placements))
	for _, p := range res.Placements {
		out[p.Pod] = p.Node
	}
	return out
}

// sameDecisions compares our placements with kube's: which pods bound, and
// where. It says how many agree and names the first few that do not.
func sameDecisions(ours, kube map[string]string) (string, bool) {
	var diffs []string
	for pod, node := range kube {
		if ours[pod] != node {
			diffs = append(diffs, fmt.Sprintf("%s: kube %s, ours %q", pod, node, ours[pod]))
		}
	}
	for pod, node := range ours {
		if _, ok := kube[pod]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: kube left it pending, ours %s", pod, node))
		}
	}
	if len(diffs) == 0 {
		return fmt.Sprintf("identical: the same %d pods bound, each on the same node", len(kube)), true
	}
	sort.Strings(diffs)
	return fmt.Sprintf("%d of %d/%d placements (ours/kube) differ: %s", len(diffs), len(ours), len(kube), strings.Join(diffs[:min(5, len(diffs))], "; ")), false
}
