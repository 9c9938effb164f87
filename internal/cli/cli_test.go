package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var update = flag.Bool("update", false, "rewrite golden files")

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	code = Execute(streams, Settings{}, args)
	return code, out.String(), errOut.String()
}

var timing = regexp.MustCompile(`time: [0-9.]+(µs|ms|s) \([0-9]+ pods/s\)`)

func golden(t *testing.T, name, got string) {
	t.Helper()
	got = timing.ReplaceAllString(got, "time: X (N pods/s)")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", name, d)
	}
}

const small = "../../testdata/clusters/small.yaml"

func TestGoldenOutputs(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"dryrun-small-table", []string{"dryrun", "-f", small}},
		{"dryrun-small-wide", []string{"dryrun", "-f", small, "-o", "wide"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := run(t, "", tt.args...)
			if code != 0 {
				t.Fatalf("exit code %d", code)
			}
			golden(t, tt.name, out)
		})
	}
}

func TestDryRunWarnsAboutUnknownKinds(t *testing.T) {
	_, _, stderr := run(t, "", "dryrun", "-f", small)
	if !strings.Contains(stderr, "Deployment shop/web (kind apps/v1/Deployment is not used by the scheduler)") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr = %q, want one warning about the Deployment", stderr)
	}
}

func TestDryRunBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	malformed := write("malformed.yaml", "apiVersion: v1\nkind: Node\nmetadata: [\n")
	badQty := write("badqty.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: 4x}}}]}\n")
	noNodes := write("nonodes.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
	unknownPlugin := write("cfg.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n")
	badArgs := write("args.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Foo}}\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"malformed YAML names the file and line", []string{"dryrun", "-f", malformed}, malformed + ":3: malformed YAML"},
		{"a missing file", []string{"dryrun", "-f", filepath.Join(dir, "nope.yaml")}, "nope.yaml: no such file or directory"},
		{"an unparseable quantity names the field", []string{"dryrun", "-f", badQty}, "spec.containers[0].resources.requests.cpu: invalid quantity \"4x\""},
		{"a cluster without nodes", []string{"dryrun", "-f", noNodes}, "the cluster has no nodes"},
		{"an unknown plugin names the config file", []string{"dryrun", "-f", small, "--config", unknownPlugin}, unknownPlugin + ": "},
		{"invalid plugin args name the field", []string{"dryrun", "-f", small, "--config", badArgs}, "scoringStrategy.type"},
		{"an unknown output format", []string{"dryrun", "-f", small, "-o", "xml"}, `--output: unknown format "xml" (want one of table, wide, json, yaml)`},
		{"a file name for -o, the format", []string{"dryrun", "-f", small, "-o", "out/placements.json"}, "; -o is the output format, as in kubectl; to save the output, redirect it: > out/placements.json"},
		{"no file", []string{"dryrun"}, "-f/--filename is required"},
		{"an unknown flag", []string{"dryrun", "--bogus"}, "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != 2 {
				t.Errorf("exit code = %d, want 2 (stderr %q)", code, stderr)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "error: ") || !strings.Contains(last, tt.wantErr) {
				t.Errorf("stderr = %q, want one line containing %q", stderr, tt.wantErr)
			}
		})
	}
}
