package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// verbs returns every command of the tree but help and the hidden ones,
// the root first, parents before children.
func verbs() []*cobra.Command {
	var out bytes.Buffer
	root := NewRootCmd(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, Settings{})
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		all = append(all, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return all
}

// helpGoldenName is testdata/<name>.golden for a command: root-help,
// explain-help, completion-bash-help, ...
func helpGoldenName(c *cobra.Command) string {
	if !c.HasParent() {
		return "root-help"
	}
	path := strings.Fields(c.CommandPath())[1:]
	if c.Root().Annotations[cobra.CommandDisplayNameAnnotation] != "" {
		path = strings.Fields(c.CommandPath())[2:]
	}
	return strings.Join(path, "-") + "-help"
}

// TestGoldenHelpOfEveryVerb holds `--help` of every command; a new verb
// gets its golden with `make golden`.
func TestGoldenHelpOfEveryVerb(t *testing.T) {
	home, _ := os.UserHomeDir()
	for _, c := range verbs() {
		name := helpGoldenName(c)
		t.Run(name, func(t *testing.T) {
			args := append(strings.Fields(c.CommandPath())[2:], "--help")
			if !c.HasParent() {
				args = []string{"--help"}
			}
			code, out, stderr := run(t, "", args...)
			if code != 0 {
				t.Fatalf("%v: exit code %d: %s", args, code, stderr)
			}
			// --cache-dir's default is under the home directory.
			if home != "" {
				out = strings.ReplaceAll(out, home, "$HOME")
			}
			golden(t, name, out)
		})
	}
}

// TestEveryVerbHasExamplesInKubectlStyle checks the Example of every verb:
// paragraphs indented by two spaces, each starting with a '# ' comment,
// and at least one running the verb itself.
func TestEveryVerbHasExamplesInKubectlStyle(t *testing.T) {
	for _, c := range verbs() {
		if !c.HasParent() || (c.HasParent() && c.Parent().Name() == "completion") {
			continue // the root has no examples, as kubectl's; cobra's per-shell commands explain themselves in Long
		}
		t.Run(c.Name(), func(t *testing.T) {
			if c.Example == "" {
				t.Fatal("no Example")
			}
			verb := "kubectl sched " + strings.Join(strings.Fields(c.CommandPath())[2:], " ")
			ran := false
			for i, para := range strings.Split(c.Example, "\n\n") {
				lines := strings.Split(para, "\n")
				if !strings.HasPrefix(lines[0], "  # ") {
					t.Errorf("example %d does not start with an indented '# ' comment: %q", i+1, lines[0])
				}
				for _, l := range lines {
					if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") || strings.TrimSpace(l) != strings.TrimRight(l[2:], " ") {
						t.Errorf("example %d: line not indented by exactly two spaces: %q", i+1, l)
					}
					ran = ran || strings.Contains(l, verb)
				}
			}
			if !ran {
				t.Errorf("no example runs %q:\n%s", verb, c.Example)
			}
		})
	}
}
