package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	exCluster     = "../../examples/cluster.yaml"
	exMaintenance = "../../examples/maintenance.yaml"
	exTrace       = "../../examples/trace.yaml"
	exWeb         = "../../examples/web.yaml"
)

// schedulingVerbs are a run of each verb that schedules, offline where it
// can; run's ends at the kubeconfig, after its flags and configuration
// are checked.
func schedulingVerbs(t *testing.T) map[string][]string {
	nope := filepath.Join(t.TempDir(), "nope")
	return map[string][]string{
		"dryrun":   {"dryrun", "-f", small},
		"explain":  {"explain", "pod", "api-3", "-n", "web", "--snapshot", exCluster},
		"capacity": {"capacity", "-f", exWeb, "--snapshot", exCluster, "--max", "5"},
		"drain":    {"drain", "n1", "--snapshot", exMaintenance},
		"replay":   {"replay", "-f", exCluster, "-f", exTrace, "--until", "1m"},
		"compare":  {"compare", "-f", small, "--config", "default"},
		"run":      {"run", "--kubeconfig", nope},
	}
}

// TestEverySchedulingVerbTakesFeatureGates: each verb that schedules
// accepts --feature-gates as kube-scheduler does (a gate the engine does
// not read yet changes nothing it prints), and a set kube refuses stops
// it with kube's words on one line, exit code 2 and nothing on stdout.
func TestEverySchedulingVerbTakesFeatureGates(t *testing.T) {
	bad := []struct{ gates, want string }{
		{"NoSuchGate=true", "error: --feature-gates: unrecognized feature gate: NoSuchGate\n"},
		{"DynamicResourceAllocation=false", "error: --feature-gates: cannot set feature gate DynamicResourceAllocation to false, feature is locked to true\n"},
		{"GenericWorkload=maybe", `error: --feature-gates: invalid value of GenericWorkload=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax` + "\n"},
		{"TopologyAwareWorkloadScheduling=true", "error: --feature-gates: TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]\n"},
	}
	for verb, args := range schedulingVerbs(t) {
		t.Run(verb, func(t *testing.T) {
			wantCode, wantOut, _ := run(t, "", args...)
			gated := append(append([]string{}, args...), "--feature-gates", "GenericWorkload=true", "--feature-gates", "TopologyAwareWorkloadScheduling=true")
			code, out, stderr := run(t, "", gated...)
			if code != wantCode || untimed(out) != untimed(wantOut) {
				t.Errorf("with --feature-gates: exit %d and %d bytes of output, want %d and the %d bytes without (stderr %q)", code, len(out), wantCode, len(wantOut), stderr)
			}
			if strings.Contains(stderr, "feature-gates") {
				t.Errorf("stderr speaks of the gates: %q", stderr)
			}
			for _, b := range bad {
				code, out, stderr := run(t, "", append(append([]string{}, args...), "--feature-gates", b.gates)...)
				if code != ExitUsage || out != "" || stderr != b.want {
					t.Errorf("--feature-gates %s: exit %d, stdout %q, stderr %q; want 2, nothing and %q", b.gates, code, out, stderr, b.want)
				}
			}
		})
	}
}

// untimed is output without its timings.
func untimed(out string) string { return timing.ReplaceAllString(out, "time: X (N pods/s)") }

// TestFeatureGatesFromTheSettings: --feature-gates is a setting like any
// other flag, globally and per verb.
func TestFeatureGatesFromTheSettings(t *testing.T) {
	t.Setenv(EnvSettings, writeSettings(t, "feature-gates: [GenericWorkload=true]\n"))
	t.Setenv("KUBECTL_SCHED_DRYRUN_FEATURE_GATES", "NoSuchGate=true")
	code, out, stderr := run(t, "", "dryrun", "-f", small)
	if want := "error: --feature-gates: unrecognized feature gate: NoSuchGate\n"; code != ExitUsage || out != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing and %q", code, out, stderr, want)
	}
	for _, verb := range []string{"dryrun", "explain", "capacity", "drain", "replay", "compare", "run"} {
		if got := effective(t, "", verb, "feature-gates"); verb != "dryrun" && got != "[GenericWorkload=true]" {
			t.Errorf("%s --feature-gates from the settings file = %s, want [GenericWorkload=true]", verb, got)
		}
	}
}

// TestEngineFlagsLoadTheGates: what --feature-gates sets reaches the
// engine's Features, on kube's defaults; a GA gate set gets kube's warning.
func TestEngineFlagsLoadTheGates(t *testing.T) {
	var errOut strings.Builder
	cmd := &cobra.Command{Use: "verb"}
	e := &engineFlags{IOStreams: genericiooptions.IOStreams{ErrOut: &errOut}, dump: dumpFiles, filesUsage: "dump", seedUsage: "seed"}
	e.AddFlags(cmd)
	if err := cmd.ParseFlags([]string{"--snapshot", small, "--feature-gates", "GenericWorkload=true, TaintTolerationComparisonOperators=true", "--feature-gates", "NodeDeclaredFeatures=true", "--seed", "3"}); err != nil {
		t.Fatal(err)
	}
	in, err := e.load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := schedcore.DefaultFeatures
	want.GenericWorkload = true
	want.TaintTolerationComparisonOperators = true
	if diff := cmp.Diff(want, in.Features); diff != "" {
		t.Errorf("Features (-want +got):\n%s", diff)
	}
	if !in.UseSeed || in.Seed != 3 || in.Source != "snapshot" || in.Cluster == nil || len(in.Cluster.Nodes) == 0 {
		t.Errorf("seed %d (use %t), source %q, cluster %v", in.Seed, in.UseSeed, in.Source, in.Cluster != nil)
	}
	if got := *in.Config.Profiles[1].SchedulerName; len(in.Config.Profiles) != 2 || got != "kubectl-sched" {
		t.Errorf("default profiles: %d, second %s", len(in.Config.Profiles), got)
	}
	if want := "warning: --feature-gates: setting GA feature gate NodeDeclaredFeatures=true. It will be removed in a future release.\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
}

// TestSnapshotIsTheDumpInEveryVerb: where -f has always been the dump,
// --snapshot is the same flag: the two mix, in order, and the settings
// key is -f's.
func TestSnapshotIsTheDumpInEveryVerb(t *testing.T) {
	_, want, _ := run(t, "", "dryrun", "-f", small)
	for _, args := range [][]string{
		{"dryrun", "--snapshot", small},
		{"dryrun", "--snapshot=" + small},
	} {
		code, out, stderr := run(t, "", args...)
		if code != 0 || untimed(out) != untimed(want) {
			t.Errorf("%s: exit %d, stdout differs from -f's (stderr %q)", strings.Join(args, " "), code, stderr)
		}
	}
	// -f then --snapshot: both read, as two -f.
	_, want, _ = run(t, "", "compare", "-f", exCluster, "-f", exTrace, "--config", "default", "--replay", "--until", "1m")
	code, out, stderr := run(t, "", "compare", "-f", exCluster, "--snapshot", exTrace, "--config", "default", "--replay", "--until", "1m")
	if code != 0 || untimed(out) != untimed(want) {
		t.Errorf("compare -f --snapshot: exit %d, stdout differs from two -f's (stderr %q)", code, stderr)
	}
	// A setting for the dump is -f's key; --snapshot on the command line
	// beats it as -f does.
	t.Setenv("KUBECTL_SCHED_DRYRUN_FILENAME", filepath.Join(t.TempDir(), "nope.yaml"))
	code, out, stderr = run(t, "", "dryrun", "--snapshot", small)
	if _, want, _ := run(t, "", "dryrun", "-f", small); code != 0 || untimed(out) != untimed(want) {
		t.Errorf("dryrun --snapshot with a -f setting: exit %d (stderr %q), want the command line's dump", code, stderr)
	}
	root := NewRootCmd(genericiooptions.NewTestIOStreamsDiscard(), Settings{})
	if err := keysOf(root).check("dryrun.snapshot"); err == nil || err.Error() != `key "dryrun.snapshot": --snapshot is --filename's other name: set dryrun.filename` {
		t.Errorf("settings key dryrun.snapshot: %v", err)
	}
	for verb, key := range map[string]string{"dryrun": "filename", "replay": "filename", "compare": "filename", "explain": "snapshot", "capacity": "snapshot", "drain": "snapshot"} {
		root := NewRootCmd(genericiooptions.NewTestIOStreamsDiscard(), Settings{})
		keys := keysOf(root)
		if _, ok := keys.verbs[verb][key]; !ok {
			t.Errorf("%s: no settings key %s.%s", verb, verb, key)
		}
		if key == "filename" {
			if _, ok := keys.verbs[verb]["snapshot"]; ok {
				t.Errorf("%s: --snapshot, -f's other name, is a settings key of its own", verb)
			}
		}
	}
}

// TestLoadConfigNamesTheDefaultProfile: the one place the default
// profile is named, for each verb's use.
func TestLoadConfigNamesTheDefaultProfile(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  []string
	}{
		{"the offline verbs: the default scheduler's and run's", nil, []string{"default-scheduler", "kubectl-sched"}},
		{"run: kubectl-sched", []string{"kubectl-sched"}, []string{"kubectl-sched"}},
		{"top: the pod's scheduler", []string{"my-scheduler"}, []string{"my-scheduler"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig("", tt.names...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range cfg.Profiles {
				got = append(got, *p.SchedulerName)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
		})
	}
	cfg, err := loadConfig("../../examples/sched-config.yaml", "kubectl-sched")
	if err != nil {
		t.Fatal(err)
	}
	if n := *cfg.Profiles[0].SchedulerName; len(cfg.Profiles) != 1 || n != "default-scheduler" {
		t.Errorf("--config's profiles renamed: %d, %s", len(cfg.Profiles), n)
	}
}

func TestCompleteFeatureGates(t *testing.T) {
	got, _ := completeFeatureGates(nil, nil, "GenericWorkload=true,TopologyAwareWork")
	if diff := cmp.Diff([]string{"GenericWorkload=true,TopologyAwareWorkloadScheduling="}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = completeFeatureGates(nil, nil, "GenericWorkload=")
	if diff := cmp.Diff([]string{"GenericWorkload=true", "GenericWorkload=false"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = completeFeatureGates(nil, nil, "DynamicResourceAllocatio")
	if len(got) != 0 {
		t.Errorf("a locked gate completed: %v", got)
	}
}
