package docs

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/app"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// The docs, the README and the verbs' help say the same things where a test
// can tell: the flags a command line in them uses exist, every flag of a
// verb is in its page, and the kinds a dump holds are the ones the loader
// reads.

var (
	// commandLine finds `kubectl sched VERB ...` up to the end of the line
	// or of the inline code span.
	commandLine = regexp.MustCompile("kubectl sched ([a-z]+)((?: [^`|;&\n]*)?)")
	flagToken   = regexp.MustCompile(`(?:^|[\s\[(|])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b`)
)

// docPages are the pages checked: the README and every page under docs/.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	out := map[string]string{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

func rootCommand() *cobra.Command {
	var buf bytes.Buffer
	return app.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &buf, ErrOut: &buf})
}

func lookupFlag(c *cobra.Command, tok string) *pflag.Flag {
	if strings.HasPrefix(tok, "--") {
		name := strings.TrimPrefix(tok, "--")
		if f := c.Flags().Lookup(name); f != nil {
			return f
		}
		return c.InheritedFlags().Lookup(name)
	}
	short := strings.TrimPrefix(tok, "-")
	if f := c.Flags().ShorthandLookup(short); f != nil {
		return f
	}
	return c.InheritedFlags().ShorthandLookup(short)
}

// TestDocCommandLinesUseFlagsTheVerbHas: every flag on a `kubectl sched
// VERB` line of the docs and the README is one of VERB's.
func TestDocCommandLinesUseFlagsTheVerbHas(t *testing.T) {
	root := rootCommand()
	checked := 0
	for page, text := range docPages(t) {
		for i, line := range strings.Split(text, "\n") {
			for _, m := range commandLine.FindAllStringSubmatch(line, -1) {
				verb, rest := m[1], m[2]
				c, _, err := root.Find([]string{verb})
				if err != nil || c == root {
					continue // prose: "kubectl sched is ..."
				}
				// A flag's value may itself look like a flag ("-o -" is not).
				for _, fm := range flagToken.FindAllStringSubmatch(rest, -1) {
					tok := fm[1]
					checked++
					if lookupFlag(c, tok) == nil {
						t.Errorf("%s:%d: kubectl sched %s has no flag %s: %q", page, i+1, verb, tok, strings.TrimSpace(line))
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d flags checked: the pattern finds too little", checked)
	}
}

// TestEveryFlagOfAVerbIsInItsPage: docs/VERB.md names each flag VERB
// defines (the kubeconfig flags shared with kubectl and klog's are
// described once, not checked here).
func TestEveryFlagOfAVerbIsInItsPage(t *testing.T) {
	// The verbs documented on another verb's or topic's page.
	pageOf := map[string]string{"settings": "config.md"}
	root := rootCommand()
	shared := map[string]bool{}
	for _, name := range []string{"kubeconfig", "context", "cluster", "user", "namespace", "server", "token", "as", "as-group", "as-uid",
		"certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify", "tls-server-name", "request-timeout",
		"cache-dir", "disable-compression", "username", "password", "as-user-extra", "proxy-url"} {
		shared[name] = true
	}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Name() == "version" {
			continue
		}
		page := c.Name() + ".md"
		if p, ok := pageOf[c.Name()]; ok {
			page = p
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("kubectl sched %s has no page %s: %v", c.Name(), page, err)
			continue
		}
		text := string(b)
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Deprecated != "" || shared[f.Name] || f.Name == "help" {
				return
			}
			mentioned := `--` + regexp.QuoteMeta(f.Name) + `\b`
			if f.Shorthand != "" {
				mentioned += "|(^|[\\s`(\\[])-" + f.Shorthand + `\b`
			}
			if !regexp.MustCompile(mentioned).MatchString(text) {
				t.Errorf("docs/%s does not mention --%s (%s)", page, f.Name, f.Usage)
			}
		})
	}
}

// TestTheKindsToDumpAgree: the `kubectl get` that makes a dump is the same
// in dryrun's help, the README and docs/dryrun.md, and names a resource
// for every kind the loader reads; docs/dryrun.md lists those kinds.
func TestTheKindsToDumpAgree(t *testing.T) {
	want := snapshot.KubectlGet
	var help bytes.Buffer
	root := app.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &help, ErrOut: &help})
	root.SetArgs([]string{"dryrun", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(help.String()), " "), want) {
		t.Errorf("dryrun --help does not say %q:\n%s", want, help.String())
	}
	get := regexp.MustCompile(`kubectl get [a-z,]+ -A -o yaml`)
	for page, text := range docPages(t) {
		for _, m := range get.FindAllString(text, -1) {
			if strings.HasPrefix(m, "kubectl get nodes") && strings.Contains(m, ",") && m != want {
				t.Errorf("%s: %q, want %q", page, m, want)
			}
		}
	}
	pages := docPages(t)
	for _, page := range []string{"../README.md", "dryrun.md"} {
		if !strings.Contains(pages[page], want) {
			t.Errorf("%s does not say %q", page, want)
		}
	}
	listed := regexp.MustCompile(`(?s)Read kinds: (.*?)\.\n`).FindStringSubmatch(pages["dryrun.md"])
	if listed == nil {
		t.Fatal("docs/dryrun.md has no 'Read kinds: ...' sentence")
	}
	for _, k := range snapshot.Kinds {
		if !regexp.MustCompile(`\b` + k.Kind + `\b`).MatchString(listed[1]) {
			t.Errorf("docs/dryrun.md's read kinds do not name %s", k.Kind)
		}
	}
}
