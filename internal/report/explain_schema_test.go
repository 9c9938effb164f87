package report

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// jsonPaths lists the JSON field paths of t: "nodes[].failures[].plugin".
func jsonPaths(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			prefix += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			// An embedded struct without a name of its own: encoding/json
			// writes its fields as the outer struct's.
			out = append(out, jsonPaths(f.Type, prefix)...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		out = append(out, p)
		out = append(out, jsonPaths(f.Type, p)...)
	}
	return out
}

// TestExplainJSONSchemaIsStableAndDocumented: the fields of `explain -o
// json` are only ever added (every path of the schema as first published is
// still there), and each one is described in docs/explain.md's JSON section.
func TestExplainJSONSchemaIsStableAndDocumented(t *testing.T) {
	got := jsonPaths(reflect.TypeOf(Explanation{}), "")
	published := []string{
		"pod", "profile", "source", "boundNode", "boundNodeRank", "boundNodeTotal", "nominatedNode",
		"preFilter", "preFilter.code", "preFilter.plugin", "preFilter.reason",
		"skippedFilterPlugins", "skippedScorePlugins", "filterPlugins", "scorePluginWeights", "numNodes", "numFeasible",
		"nodes", "nodes[].node", "nodes[].feasible", "nodes[].failures",
		"nodes[].failures[].plugin", "nodes[].failures[].reason", "nodes[].failures[].code", "nodes[].failures[].first",
		"nodes[].scores", "nodes[].rawScores", "nodes[].normalizedScores", "nodes[].total", "nodes[].rank",
		"nodes[].gaps", "nodes[].gaps[].plugin", "nodes[].gaps[].gap", "nodes[].free",
		"ranking", "selected", "tiedBest", "bestTotal", "message",
		"preemption", "preemption.node", "preemption.victims", "preemption.pdbViolations", "preemption.message",
		"nearest",
	}
	have := map[string]bool{}
	for _, p := range got {
		have[p] = true
	}
	for _, p := range published {
		if !have[p] {
			t.Errorf("field %s was published and is gone (fields are only ever added)", p)
		}
	}

	doc, err := os.ReadFile("../../docs/explain.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "### `-o json` / `-o yaml`")
	end := strings.Index(text, "## Fidelity")
	if start < 0 || end < start {
		t.Fatal("docs/explain.md has no JSON section before Fidelity")
	}
	section := text[start:end]
	// The field table: every path, its leaf in backticks on a row naming
	// its parent (`nodes[].failures[]` rows list `plugin`, `reason`, ...).
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	ident := regexp.MustCompile("`([^`]*)`")
	norm := func(s string) string { return strings.ReplaceAll(s, "[]", "") }
	word := regexp.MustCompile(`[A-Za-z]+`)
	documented := func(path string) bool {
		path = norm(path)
		parent, leaf := "", path
		if i := strings.LastIndex(path, "."); i >= 0 {
			parent, leaf = path[:i], path[i+1:]
		}
		for _, r := range rows {
			cols := strings.SplitN(r, "|", 3)
			if len(cols) < 3 {
				continue
			}
			names := ident.FindAllStringSubmatch(cols[1], -1)
			base := "" // the row's first name's parent, for `.rank` after `nodes[].total`
			if len(names) > 0 {
				if i := strings.LastIndex(norm(names[0][1]), "."); i >= 0 {
					base = norm(names[0][1])[:i]
				}
			}
			for _, m := range names {
				n := norm(m[1])
				if strings.HasPrefix(n, ".") {
					n = base + n
				}
				if n == path {
					return true
				}
			}
			// A parent's row describing its fields: `plugin`, `{plugin, gap}`.
			if parent != "" && len(names) > 0 && norm(names[0][1]) == parent {
				for _, m := range ident.FindAllStringSubmatch(cols[2], -1) {
					for _, tok := range word.FindAllString(m[1], -1) {
						if tok == leaf {
							return true
						}
					}
				}
			}
		}
		return false
	}
	var missing []string
	for _, p := range got {
		if !documented(p) {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("fields not described in docs/explain.md's JSON table: %s", strings.Join(missing, ", "))
	}
}
