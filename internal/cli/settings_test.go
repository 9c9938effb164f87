package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// writeSettings writes a settings file in a temporary directory.
func writeSettings(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// effective parses args for a verb of a fresh command tree, applies the
// settings in path and returns the flag's value.
func effective(t *testing.T, path string, verb, flag string, args ...string) string {
	t.Helper()
	root := NewRootCmd(genericiooptions.NewTestIOStreamsDiscard(), Settings{})
	cmd, _, err := root.Find([]string{verb})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	s, err := loadSettings(root, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.apply(cmd); err != nil {
		t.Fatal(err)
	}
	return cmd.Flags().Lookup(flag).Value.String()
}

// TestSettingsPrecedence: for two verbs, each step of the precedence
// wins over the ones below it: the flag, the verb's variable, the global
// variable, the verb's key in the file, the global key, the default.
func TestSettingsPrecedence(t *testing.T) {
	global := "output: yaml\n"
	both := "output: yaml\ndryrun:\n  output: wide\nexplain:\n  output: wide\n"
	tests := []struct {
		name string
		file string
		env  map[string]string // VERB is replaced by the verb's name
		args []string
		want string
	}{
		{name: "nothing set is the built-in default", want: "table"},
		{name: "the file's global key sets it", file: global, want: "yaml"},
		{name: "the file's per-verb key beats its global key", file: both, want: "wide"},
		{name: "the global variable beats the file", file: both, env: map[string]string{"KUBECTL_SCHED_OUTPUT": "json"}, want: "json"},
		{name: "the verb's variable beats the global one", file: both,
			env: map[string]string{"KUBECTL_SCHED_OUTPUT": "json", "KUBECTL_SCHED_VERB_OUTPUT": "yaml"}, want: "yaml"},
		{name: "the flag beats everything", file: both,
			env: map[string]string{"KUBECTL_SCHED_OUTPUT": "json", "KUBECTL_SCHED_VERB_OUTPUT": "yaml"}, args: []string{"-o", "table"}, want: "table"},
	}
	for _, verb := range []string{"dryrun", "explain"} {
		for _, tt := range tests {
			t.Run(verb+"/"+tt.name, func(t *testing.T) {
				path := "" // the default path, in TestMain's empty XDG_CONFIG_HOME
				if tt.file != "" {
					path = writeSettings(t, tt.file)
				}
				for k, v := range tt.env {
					t.Setenv(strings.Replace(k, "VERB", strings.ToUpper(verb), 1), v)
				}
				if got := effective(t, path, verb, "output", tt.args...); got != tt.want {
					t.Errorf("--output = %q, want %q", got, tt.want)
				}
			})
		}
	}
}

// TestSettingsReachTheVerb: a setting changes what the verb does (dryrun
// prints JSON), and --help shows the default it sets and where.
func TestSettingsReachTheVerb(t *testing.T) {
	path := writeSettings(t, "dryrun:\n  output: json\n")
	code, out, stderr := run(t, "", "dryrun", "-f", "../../examples/cluster.yaml", "--settings", path)
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Fatalf("exit %d, stdout %.80q, stderr %q; want JSON", code, out, stderr)
	}
	_, help, _ := run(t, "", "dryrun", "--help", "--settings", path)
	if want := `Output format: table, wide, json or yaml (set in ` + path + `:2) (default "json")`; !strings.Contains(help, want) {
		t.Errorf("help does not say %q:\n%s", want, help)
	}
}

// TestABadSettingsFileIsOneLine: a malformed file, an unknown key, a bad
// value: one line naming the file, the line and the key; exit 2 and
// nothing on stdout, whichever verb runs.
func TestABadSettingsFileIsOneLine(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"malformed YAML", "output: wide\ndryrun:\n  output: [json\n", ":2: did not find expected ',' or ']'"},
		{"a key no verb has", "output: wide\nouptut: json\n", `:2: unknown key "ouptut": no verb has a --ouptut flag`},
		{"a flag the verb lacks", "dryrun:\n  metrics-url: x\n", `:2: unknown key "dryrun.metrics-url": dryrun has no --metrics-url flag`},
		{"a verb that does not exist", "dryrn:\n  output: x\n", `:1: unknown key "dryrn": no verb has a --dryrn flag`},
		{"a dotted key at the top", "dryrun.output: json\n", `:1: unknown key "dryrun.output": nest per-verb keys`},
		{"a verb given a value", "dryrun: json\n", `:1: key "dryrun" is a verb: give its flags under it (dryrun.FLAG)`},
		{"a flag meaning different things per verb, globally", "seed: 1\n",
			`:1: key "seed": --seed means something different to each verb (compare, dryrun, explain, replay): set it per verb, as compare.seed`},
		{"a value of the wrong type", "explain:\n  nearest: many\n", `:2: explain.nearest: invalid argument "many" for "--nearest" flag`},
		{"a list for a one-value flag", "explain:\n  nearest: [1, 2]\n", `:2: explain.nearest: --nearest takes one value, not a list`},
		{"not a mapping", "- output\n", `:1: want a mapping of keys to values`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeSettings(t, tt.file)
			for _, verb := range [][]string{{"version"}, {"dryrun", "-f", "../../examples/cluster.yaml"}} {
				code, out, stderr := run(t, "", append(verb, "--settings", path)...)
				want := "error: settings " + path + tt.want
				if code != ExitUsage || out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2, nothing and one line starting %q", verb[0], code, out, stderr, want)
				}
			}
		})
	}
	t.Run("a variable of the wrong type names the variable", func(t *testing.T) {
		t.Setenv("KUBECTL_SCHED_EXPLAIN_NEAREST", "x")
		code, out, stderr := run(t, "", "explain", "pod", "x", "-f", "../../examples/cluster.yaml")
		want := `error: settings KUBECTL_SCHED_EXPLAIN_NEAREST: explain.nearest: invalid argument "x" for "--nearest" flag`
		if code != ExitUsage || out != "" || !strings.HasPrefix(stderr, want) {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, want)
		}
	})
	t.Run("a missing file named by --settings", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope.yaml")
		code, _, stderr := run(t, "", "version", "--settings", missing)
		if want := "error: settings: open " + missing + ": no such file or directory\n"; code != ExitUsage || stderr != want {
			t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
		}
	})
}

// TestSettingsView lists what is set, where, what it overrides and which
// verbs it reaches.
func TestSettingsView(t *testing.T) {
	path := writeSettings(t, "output: wide\nno-preemption: true\ntop:\n  metrics-url: http://127.0.0.1:10259/metrics\n")
	t.Setenv("KUBECTL_SCHED_OUTPUT", "json")
	code, out, stderr := run(t, "", "settings", "view", "--settings", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "Settings file: " + path + "\n" + strings.Join([]string{
		"KEY              VALUE                           FROM                                                 APPLIES TO",
		"no-preemption    true                            " + pad(path+":2", 53) + "compare,dryrun,replay",
		"output           json                            " + pad("KUBECTL_SCHED_OUTPUT (over "+path+":1)", 53) + "capacity,drain,dryrun,explain",
		"top.metrics-url  http://127.0.0.1:10259/metrics  " + pad(path+":4", 53) + "top",
	}, "\n") + "\n"
	if diff := cmp.Diff(want, alignFrom(out)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func pad(s string, n int) string { return s + strings.Repeat(" ", max(1, n-len(s))) }

// alignFrom re-pads the FROM column to 53 wide, since the temporary
// path's length varies.
func alignFrom(out string) string {
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		return out
	}
	head := lines[1]
	from, to := strings.Index(head, "FROM"), strings.Index(head, "APPLIES TO")
	for i := 1; i < len(lines); i++ {
		if len(lines[i]) > to {
			lines[i] = lines[i][:from] + pad(strings.TrimRight(lines[i][from:to], " "), 53) + lines[i][to:]
		}
	}
	return strings.Join(lines, "\n")
}

// TestSettingsSet writes keys, keeps the file's other keys and comments,
// follows a symbolic link, and refuses what it must not replace.
func TestSettingsSet(t *testing.T) {
	t.Run("keys are added and replaced, comments kept", func(t *testing.T) {
		path := writeSettings(t, "# mine\noutput: wide # always\n")
		for _, args := range [][]string{{"output", "json"}, {"dryrun.output", "yaml"}, {"dryrun.filename", "a.yaml", "b.yaml"}, {"top.interval", "5s"}} {
			if code, _, stderr := run(t, "", append([]string{"settings", "set", "--settings", path}, args...)...); code != 0 {
				t.Fatalf("set %v: exit %d: %s", args, code, stderr)
			}
		}
		got, _ := os.ReadFile(path)
		want := "# mine\noutput: json # always\ndryrun:\n  output: yaml\n  filename: [a.yaml, b.yaml]\ntop:\n  interval: 5s\n"
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
		if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
			t.Errorf("%d files beside the settings, want none left behind", len(entries)-1)
		}
	})
	t.Run("a symbolic link is followed and stays a link", func(t *testing.T) {
		target := writeSettings(t, "output: wide\n")
		link := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := run(t, "", "settings", "set", "--settings", link, "output", "json"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced (%v)", err)
		}
		if got, _ := os.ReadFile(target); string(got) != "output: json\n" {
			t.Errorf("target holds %q", got)
		}
	})
	t.Run("a dangling symbolic link gets its target created", func(t *testing.T) {
		dir := t.TempDir()
		link := filepath.Join(dir, "config.yaml")
		if err := os.Symlink("real.yaml", link); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := run(t, "", "settings", "set", "--settings", link, "top.interval", "5s"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "real.yaml")); string(got) != "top:\n  interval: 5s\n" {
			t.Errorf("target holds %q", got)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced (%v)", err)
		}
	})
	t.Run("a special file is refused", func(t *testing.T) {
		code, out, stderr := run(t, "", "settings", "set", "--settings", "/dev/full", "output", "json")
		want := "error: settings /dev/full: not a regular file (Dc---------): refusing to replace it\n"
		if code != ExitUsage || out != "" || stderr != want {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, want)
		}
	})
	t.Run("a read-only directory fails and leaves nothing", func(t *testing.T) {
		dir := t.TempDir()
		if os.Geteuid() == 0 {
			// root writes in a mode 0555 directory; sysfs refuses even root.
			dir = "/sys"
		} else if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "kubectl-sched-config.yaml")
		code, out, stderr := run(t, "", "settings", "set", "--settings", path, "output", "json")
		if code != ExitFailure || out != "" || !strings.HasPrefix(stderr, "error: settings "+path+": ") || !strings.HasSuffix(stderr, ": permission denied\n") {
			t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one line ending in permission denied", code, out, stderr)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s was written", path)
		}
	})
	t.Run("an unknown key or a bad value writes nothing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"dryrun.nearest", "3"}, `error: settings set: unknown key "dryrun.nearest": dryrun has no --nearest flag` + "\n"},
			{[]string{"explain.nearest", "x"}, `error: settings set: explain.nearest: invalid argument "x" for "--nearest" flag: strconv.ParseInt: parsing "x": invalid syntax` + "\n"},
			{[]string{"explain.nearest", "1", "2"}, "error: settings set: explain.nearest: --nearest takes one value, not a list\n"},
		} {
			code, _, stderr := run(t, "", append([]string{"settings", "set", "--settings", path}, tt.args...)...)
			if code != ExitUsage || stderr != tt.want {
				t.Errorf("set %v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
			}
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s was written", path)
		}
	})
}

// TestSettingsOfTheDefaultPath: without --settings, the file is
// $XDG_CONFIG_HOME/kubectl-sched/config.yaml, or KUBECTL_SCHED_SETTINGS.
func TestSettingsOfTheDefaultPath(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if code, _, stderr := run(t, "", "settings", "set", "output", "wide"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(filepath.Join(xdg, "kubectl-sched", "config.yaml")); err != nil || string(got) != "output: wide\n" {
		t.Errorf("file %q (%v)", got, err)
	}
	other := writeSettings(t, "output: json\n")
	t.Setenv(EnvSettings, other)
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}
	Execute(streams, Settings{}, []string{"settings", "view", "-o", "json"})
	if !strings.Contains(out.String(), `"file": "`+other+`"`) || !strings.Contains(out.String(), `"value": "json"`) {
		t.Errorf("view with %s=%s:\n%s", EnvSettings, other, out.String())
	}
}

// TestSettingsPathsAreRelativeToTheFile: a relative path the file gives a
// flag that names files means a file beside the settings file, whatever
// the working directory; an absolute path, standard input, a flag that
// names no file and a variable's value stay as written.
func TestSettingsPathsAreRelativeToTheFile(t *testing.T) {
	path := writeSettings(t, "config: sched.yaml\ndryrun:\n  filename: [a.yaml, /abs/b.yaml, \"-\"]\n  output: wide\n")
	dir := filepath.Dir(path)
	tests := []struct {
		name, verb, flag string
		env              map[string]string
		want             string
	}{
		{name: "a global key naming a file", verb: "dryrun", flag: "config", want: filepath.Join(dir, "sched.yaml")},
		{name: "a list of files", verb: "dryrun", flag: "filename", want: "[" + filepath.Join(dir, "a.yaml") + ",/abs/b.yaml,-]"},
		{name: "a flag naming no file", verb: "dryrun", flag: "output", want: "wide"},
		{name: "a variable's path is the working directory's", verb: "dryrun", flag: "config",
			env: map[string]string{"KUBECTL_SCHED_CONFIG": "mine.yaml"}, want: "mine.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if got := effective(t, path, tt.verb, tt.flag); got != tt.want {
				t.Errorf("--%s = %q, want %q", tt.flag, got, tt.want)
			}
		})
	}
}
