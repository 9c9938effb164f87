package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/featuregates"
)

// gateRow is a row of config.md's table of the gates that change a
// decision: | `Name` | stage, default[, locked] | what it changes |.
var gateRow = regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| ([^|]+) \\|")

// TestConfigListsTheGatesThatChangeADecision: config.md's table has a row
// for each gate the engine reads (schedcore.Features), and only those,
// each with kube-scheduler v1.37.2's stage, default and lock
// (internal/featuregates), so the page cannot drift from the code.
func TestConfigListsTheGatesThatChangeADecision(t *testing.T) {
	data, err := os.ReadFile("config.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "## Feature gates")
	if start < 0 {
		t.Fatal("config.md has no Feature gates section")
	}
	section := text[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	rows := map[string]string{}
	for _, m := range gateRow.FindAllStringSubmatch(section, -1) {
		rows[m[1]] = strings.TrimSpace(m[2])
	}
	engine := map[string]bool{}
	for _, name := range featuregates.EngineGates() {
		engine[name] = true
		g, _ := featuregates.Lookup(name)
		want := strings.ToLower(g.StageName())
		if g.StageName() == "GA" {
			want = "GA"
		}
		if g.Default {
			want += ", on"
		} else {
			want += ", off"
		}
		if g.LockToDefault {
			want += ", locked"
		}
		got, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("config.md: no row for %s, a gate the engine reads (| `%s` | %s | ... |)", name, name, want)
		case got != want:
			t.Errorf("config.md: %s is %q in kube-scheduler v1.37.2, the table says %q", name, want, got)
		}
	}
	for name := range rows {
		if !engine[name] {
			t.Errorf("config.md: %s is in the table of gates that change a decision, but the engine does not read it", name)
		}
	}
}
