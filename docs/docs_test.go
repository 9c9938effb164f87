// Package docs holds the user documentation. This test keeps the example
// outputs in it real: each block between
//
//	<!-- example: ARGS -->
//	<!-- end example -->
//
// is the output of `kubectl sched ARGS`, run in-process from the repository
// root on the shipped examples/ (ARGS may end in `| head -N` or `| tail -N`). `make docs`
// (or `make golden`) rewrites the blocks; the test fails when they drift.
// `<!-- example(custom-plugin): ARGS -->` runs the binary of
// examples/custom-plugin instead.
package docs

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/app"
	"github.com/kubectl-sched/kubectl-sched/examples/custom-plugin/poolpreference"
)

var update = flag.Bool("update", false, "rewrite the example outputs")

var (
	block  = regexp.MustCompile(`(?s)<!-- example(\([a-z-]+\))?: (.*?) -->\n(.*?)<!-- end example -->`)
	head   = regexp.MustCompile(`^(.*?) \| (head|tail) -(\d+)$`)
	timing = regexp.MustCompile(`time: [0-9.]+(µs|ms|s) \([0-9]+ pods/s\)`)
)

// binaries are the commands an example can run.
var binaries = map[string][]app.Option{
	"":              nil,
	"custom-plugin": {app.WithPlugin(poolpreference.Name, poolpreference.New, poolpreference.NewArgs)},
}

// runExample runs `kubectl sched args` in-process and renders the block.
func runExample(binary, cmdline string) (string, error) {
	shown := cmdline
	limit, tail := 0, false
	if m := head.FindStringSubmatch(cmdline); m != nil {
		cmdline = m[1]
		tail = m[2] == "tail"
		limit, _ = strconv.Atoi(m[3])
	}
	opts, ok := binaries[binary]
	if !ok {
		return "", fmt.Errorf("unknown binary %q", binary)
	}
	var out, errOut bytes.Buffer
	cmd := app.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, opts...)
	cmd.SetArgs(strings.Fields(cmdline))
	status := ""
	if err := cmd.Execute(); err != nil {
		// capacity and drain answer "no" with exit status 3 and their
		// report; the block shows the status.
		var coded interface{ Code() int }
		if !errors.As(err, &coded) {
			return "", fmt.Errorf("kubectl sched %s: %v: %s", cmdline, err, errOut.String())
		}
		status = fmt.Sprintf("(exit status %d)\n", coded.Code())
	}
	text := timing.ReplaceAllString(out.String()+errOut.String()+status, "time: X (N pods/s)")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if limit > 0 && len(lines) > limit {
		if tail {
			lines = append([]string{"..."}, lines[len(lines)-limit:]...)
		} else {
			lines = append(lines[:limit], "...")
		}
	}
	prog := "kubectl sched"
	if binary != "" {
		prog = "./" + binary
	}
	return fmt.Sprintf("```\n$ %s %s\n%s\n```\n", prog, shown, strings.Join(lines, "\n")), nil
}

func TestGoldenDocExamples(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	abs := make([]string, len(pages))
	for i, p := range pages {
		abs[i], _ = filepath.Abs(p)
	}
	t.Chdir("..") // the examples' paths are relative to the repository root
	// sweep's example writes its results beside the study
	// (examples/study.results, ignored by git): each run starts without
	// them, so that a study or input edited since cannot leave stale
	// results behind, and leaves none.
	clean := func() {
		dirs, _ := filepath.Glob("examples/*.results")
		for _, d := range dirs {
			if err := os.RemoveAll(d); err != nil {
				t.Error(err)
			}
		}
	}
	clean()
	t.Cleanup(clean)
	total := 0
	for i, page := range pages {
		t.Run(page, func(t *testing.T) {
			data, err := os.ReadFile(abs[i])
			if err != nil {
				t.Fatal(err)
			}
			var errs []error
			got := block.ReplaceAllStringFunc(string(data), func(b string) string {
				m := block.FindStringSubmatch(b)
				binary := strings.Trim(m[1], "()")
				out, err := runExample(binary, m[2])
				if err != nil {
					errs = append(errs, err)
					return b
				}
				total++
				return "<!-- example" + m[1] + ": " + m[2] + " -->\n" + out + "<!-- end example -->"
			})
			for _, err := range errs {
				t.Error(err)
			}
			if got == string(data) {
				return
			}
			if *update {
				if err := os.WriteFile(abs[i], []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			t.Errorf("docs/%s: example outputs drifted from what the commands print: run `make docs` (-doc +now):\n%s", page, cmp.Diff(string(data), got))
		})
	}
	if total == 0 {
		t.Error("no examples found")
	}
}
