package snapshot

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// splitLines are lines random YAML Lists are made of: the shapes kubectl
// writes, and what could make converting parts differ from converting the
// whole (scalars and collections spanning lines in column 0, block
// scalars, comments, document markers, directives, aliases, tabs, other
// line breaks, keys named items). Not keys that convert to one string
// (1 and "1"): which wins is random, converted whole or by parts.
var splitLines = map[string][]string{
	"head": {
		"apiVersion: v1", "kind: List", "kind: PodList", "metadata:", "  resourceVersion: \"\"",
		"a: \"open", "\"", "a: 'open", "'", "a: [1,", "2]", "a: {b: 1,", "}", "a: |", "  block",
		"a: |+", "", "   ", "# comment", "#", "items: []", "\"items\": [1]", "? items", ": x",
		"items : [2]", "<<: {items: [3]}", "...", "--- x", "%YAML 1.1", "&a k: 1", "c: *a",
		"\tk: 1", "k: 1\r", "k: \u0085x", "b: *", "items", "items: # c", "-foo: 1", "? a",
		"&a {kind: List}", "!!map {kind: List}", "!!map", "&a", "{kind: List}", "*a", "!!str x",
	},
	"items": {
		"items:", "items:  ", "- apiVersion: v1", "  kind: Node", "  metadata:", "    name: n",
		"- a: 1", "-", "- ", "  b: 2", "  c: |", "    block", "  c: |+", "  c: >-", "    folded",
		"#c", "# c", "", "   ", "- x", "- - y", "-\tz", "  d: \"q", "q\"", "q\" ", "- e: [1,",
		"  2]", "2]", "- &x {a: 1}", "- *x", "  f: *x", "- 'a", "b'", "  g: 1", "    h: [a,",
		"  i: \"a*b\"", "  j: a*", "- {k: 1}", "  l: 12345678901234567", "  m: yes", "  n: 1e3",
		"  o: !!str 3", "  p: ~", "  q: \"a\\tb\"", "  r: \u2028", "  s: \"\ufeff\"", "  - t",
		"   u: 1", "  v:", "  - w", "  x: |2", "      y", "  k: 1", "  k: 2",
	},
	"tail": {
		"kind: List", "kind: Foo", "metadata:", "  resourceVersion: \"\"", "items: []",
		"\"items\": []", "# tail", "", "z: \"", "z: [", "-foo: 1", "...", "apiVersion: v1",
	},
}

// randomList builds a YAML document of head lines, items and tail lines,
// mostly List-shaped.
func randomList(r *rand.Rand) string {
	clean := r.IntN(3) == 0
	pick := func(part string) string {
		l := splitLines[part]
		if clean {
			// Mostly lines that split.
			l = l[:min(len(l), 6)]
		}
		return l[r.IntN(len(l))]
	}
	var b strings.Builder
	line := func(s string) { b.WriteString(s); b.WriteByte('\n') }
	for range r.IntN(4) {
		line(pick("head"))
	}
	if r.IntN(8) > 0 {
		line("items:")
	}
	for range r.IntN(5) {
		line([]string{"- a: 1", "- kind: Pod", "-", "- b"}[r.IntN(4)])
		for range r.IntN(6) {
			line(pick("items"))
		}
	}
	for range r.IntN(4) {
		line(pick("tail"))
	}
	s := b.String()
	if r.IntN(10) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// TestYAMLSplitConvertsAsTheWhole converts random documents by their
// parts (convertYAMLList) and whole (YAMLToJSON): where the parts
// convert, the whole must convert to the same items and the same rest.
func TestYAMLSplitConvertsAsTheWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 19))
	split, n := 0, 40000
	if testing.Short() {
		n = 4000
	}
	// Each item's aliases are within the YAML decoder's limit, the
	// whole document's are not (it allows fewer in larger documents).
	var aliases strings.Builder
	aliases.WriteString("kind: List\nitems:\n")
	for range 200 {
		aliases.WriteString("- a: &x [" + strings.Repeat("1, ", 99) + "1]\n  b: [" + strings.Repeat("*x, ", 49) + "*x]\n")
	}
	fixed := []string{aliases.String(),
		// A flow mapping behind an anchor or tag is the document's node:
		// the decoder ignores the lines after it.
		"&a {kind: List}\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n",
		"!!map {kind: List}\nitems:\n- a: 1\n",
		"&a\n{kind: List}\nitems:\n- a: 1\n",
	}
	for i := range n {
		doc := randomList(r)
		if i < len(fixed) {
			doc = fixed[i]
		}
		rest, items, _, ok := convertYAMLList([]byte(doc), nil)
		if !ok {
			continue
		}
		split++
		whole, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%q: split, the whole does not convert: %v", doc, err)
		}
		l, ok := peekList(whole)
		if !ok || len(l.items) != len(items) {
			t.Fatalf("%q: split into %d items, the whole is %s", doc, len(items), whole)
		}
		for i := range items {
			if !bytes.Equal(items[i], l.items[i]) {
				t.Fatalf("%q: item %d is %s, in the whole %s", doc, i, items[i], l.items[i])
			}
		}
		if !bytes.Equal(rest, l.rest) {
			t.Fatalf("%q: without items %s, the whole %s", doc, rest, l.rest)
		}
	}
	if split < n/50 {
		t.Errorf("only %d of %d documents split", split, n)
	}
}

// TestUnsafeYAML checks what splitting declines whatever the lines.
func TestUnsafeYAML(t *testing.T) {
	tests := []struct {
		y    string
		want bool
	}{
		{"a: b\n", false},
		{"a: \"*.example.com\"\n", false},
		{"a: 'x*'\n", false},
		{"a: b*c/*.d\n", false},
		{"a: *x\n", true},
		{"- *x\n", true},
		{"*x: 1\n", true},
		{"a: [*x]\n", true},
		{"a: {b: 1,*x}\n", true},
		{"{\"a\":*x}\n", true},
		{"a: b\r\n", true},
		{"a: b\x00\n", true},
		{"a: \x7f\n", true},
		{"a: \u0085\n", true},
		{"a: \u2028\n", true},
		{"a: \u2029\n", true},
		{"\ufeffa: b\n", true},
		{"a:\tb\n", false},
	}
	for _, tt := range tests {
		if got := unsafeYAML([]byte(tt.y)); got != tt.want {
			t.Errorf("unsafeYAML(%q) = %v, want %v", tt.y, got, tt.want)
		}
	}
}

// loadYAMLBoth loads data as AddData does (YAML Lists split by items,
// documents on every core) and as before (each document converted whole,
// in turn: prepareWhole).
func loadYAMLBoth(t *testing.T, file string, data []byte) (now, before *Cluster, nowErr, beforeErr error) {
	t.Helper()
	now, before = &Cluster{}, &Cluster{}
	nowErr = now.AddData(file, data)
	beforeErr = addDataWith(before, file, data, func(d doc) preparedDoc { return prepareWhole(d, nil) })
	return now, before, nowErr, beforeErr
}

// yamlForms writes the objects of a JSON List as a YAML List (as
// kubectl and 'snapshot' do) and as YAML documents.
func yamlForms(t *testing.T, js []byte) map[string][]byte {
	t.Helper()
	l, ok := peekList(js)
	if !ok || l.items == nil {
		return nil
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		t.Fatal(err)
	}
	var docs bytes.Buffer
	for _, it := range l.items {
		d, err := yaml.JSONToYAML(it)
		if err != nil {
			t.Fatal(err)
		}
		docs.WriteString("---\n")
		docs.Write(d)
	}
	return map[string][]byte{"YAML List": y, "YAML documents": docs.Bytes()}
}

// TestYAMLLoadsAsBefore loads every dump under testdata/ and examples/
// (and KUBECTL_SCHED_DUMP, when set), as it is and (those under 256 KB,
// or all with KUBECTL_SCHED_LONG set) written as a YAML List and as YAML
// documents, as today and as before, and wants the same objects, origins
// and errors.
func TestYAMLLoadsAsBefore(t *testing.T) {
	var files []string
	for _, dir := range []string{"../../testdata", "../../examples"} {
		fs, err := manifestFiles(dir)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if p := os.Getenv("KUBECTL_SCHED_DUMP"); p != "" {
		files = append(files, p)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		forms := map[string][]byte{filepath.Base(f): data}
		js := data
		if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			js, _ = yaml.YAMLToJSON(data)
		}
		if len(data) < 256<<10 || os.Getenv("KUBECTL_SCHED_LONG") != "" {
			// Converting and loading the large ones three ways takes
			// minutes with the race detector.
			for form, y := range yamlForms(t, js) {
				forms[form] = y
			}
		}
		for form, data := range forms {
			a, b, ea, eb := loadYAMLBoth(t, "f", data)
			if sameLoads(t, f+" ("+form+")", "before", a, b, ea, eb) {
				n += len(a.Pods) + len(a.Nodes)
			}
		}
	}
	if n == 0 {
		t.Fatal("no pods or nodes loaded")
	}
}

// TestYAMLBadInputLoadsAsBefore loads objects, good and bad, alone, among
// YAML documents and as items of YAML Lists (short, and long enough to be
// converted on several cores), with "\n" and "\r\n" line ends, as today
// and as before (and by the map path alone), and wants the same errors,
// warnings and objects.
func TestYAMLBadInputLoadsAsBefore(t *testing.T) {
	node := "apiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\nstatus:\n  allocatable:\n    cpu: \"4\"\n"
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: a\nspec:\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: 500m\n"
	objs := map[string]string{
		"good pod":              pod,
		"malformed":             "apiVersion: v1\nkind: Pod\nmetadata: [\n",
		"malformed later":       pod + "  x: {\n",
		"bad quantity":          strings.Replace(pod, "500m", "4x", 1),
		"negative quantity":     strings.Replace(pod, "500m", "\"-1\"", 1),
		"number quantity":       strings.Replace(pod, "500m", "4", 1),
		"null quantity":         strings.Replace(pod, "500m", "~", 1),
		"wrong type":            pod + "  priority: high\n",
		"wrong type bool":       pod + "  hostNetwork: maybe\n",
		"yes is true":           pod + "  hostNetwork: yes\n",
		"missing kind":          "apiVersion: v1\nmetadata:\n  name: x\n",
		"missing name":          "apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: a\n",
		"duplicate kind":        "apiVersion: v1\nkind: Node\nkind: Pod\nmetadata:\n  name: x\n",
		"duplicate name":        strings.Replace(pod, "  name: p\n", "  name: p\n  name: q\n", 1),
		"tab indent":            strings.Replace(pod, "  name: p\n", "\tname: p\n", 1),
		"tab inside":            strings.Replace(pod, "name: p", "name:\tp", 1),
		"anchor and alias":      pod + "  nodeSelector: &s {a: b}\n  overhead: *s\n",
		"alias of the above":    pod + "  priorityClassName: *s\n",
		"dashes in a block":     strings.Replace(pod, "metadata:\n", "metadata:\n  annotations:\n    a: |\n      x\n---\n      y\n", 1),
		"comments":              "# a pod\n" + strings.Replace(pod, "kind: Pod\n", "kind: Pod # here\n#\n", 1),
		"quote over lines":      strings.Replace(pod, "name: p\n", "name: \"p\nq\"\n", 1),
		"big integer":           pod + "  activeDeadlineSeconds: 12345678901234567\n",
		"managed fields":        strings.Replace(pod, "  name: p\n", "  name: p\n  managedFields:\n  - fieldsV1: {f:b: {}, f:a: {}}\n", 1),
		"unknown kind":          "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
		"dra":                   "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: x\n",
		"list in a list":        "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(pod, "\n"), "\n", "\n  ") + "\n",
		"plain text":            "just words\n",
		"null":                  "~\n",
		"a list":                "- a\n- b\n",
		"star in a value":       pod + "  schedulerName: a*b\n",
		"unicode":               strings.Replace(pod, "name: c", "name: \"c\u00e9\"", 1),
		"control character":     strings.Replace(pod, "name: c", "name: \"c\x01\"", 1),
		"document end":          pod + "...\n",
		"block scalar keep":     strings.Replace(pod, "metadata:\n", "metadata:\n  annotations:\n    a: |+\n      x\n\n", 1),
		"item comment column 0": pod + "# after\n",
	}
	indent := func(o string) string {
		return "- " + strings.ReplaceAll(strings.TrimSuffix(o, "\n"), "\n", "\n  ") + "\n"
	}
	split := map[string]int{}
	for name, o := range objs {
		var goods, many strings.Builder
		for i := range 3 {
			goods.WriteString(indent(fmt.Sprintf(node, i)))
		}
		for i := range 70 {
			many.WriteString(indent(fmt.Sprintf(node, 10+i)))
		}
		forms := map[string]string{
			"alone":      o,
			"documents":  fmt.Sprintf(node, 0) + "---\n" + o + "---\n" + fmt.Sprintf(node, 1),
			"list":       "apiVersion: v1\nitems:\n" + goods.String() + indent(o) + "kind: List\nmetadata:\n  resourceVersion: \"\"\n",
			"long list":  "apiVersion: v1\nitems:\n" + many.String() + indent(o) + many.String()[:len(many.String())/2] + "kind: List\n",
			"list first": "# a dump\nitems:\n\n" + indent(o) + goods.String() + "kind: List\n",
			"pod list":   "apiVersion: v1\nitems:\n" + indent(o) + "kind: PodList\n",
		}
		for f, doc := range forms {
			forms[f+", CRLF"] = strings.ReplaceAll(doc, "\n", "\r\n")
		}
		for form, doc := range forms {
			for _, d := range splitDocs([]byte(doc)) {
				if _, _, _, ok := convertYAMLList(d.data, nil); ok {
					split[form]++
				}
			}
			a, b, ea, eb := loadYAMLBoth(t, "f.yaml", []byte(doc))
			sameLoads(t, name+" ("+form+")", "before", a, b, ea, eb)
			em := addDataByMap(&Cluster{}, "f.yaml", []byte(doc))
			if fmt.Sprint(ea) != fmt.Sprint(em) {
				t.Errorf("%s (%s): error %v, by the map path %v", name, form, ea, em)
			}
		}
	}
	t.Logf("documents split by items, by form: %v", split)
	if split["long list"] < len(objs)/2 || split["list first, CRLF"] < len(objs)/2 {
		t.Errorf("too few Lists split by items: %v", split)
	}
}

// TestSplitDocs splits random files, and wants the documents a line
// scanner reads (splitDocsByScanner).
func TestSplitDocs(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 20))
	lines := []string{"---", "--- ", "---\t", "--- \u00a0", "---x", "--- # c", " ---", "----", "a: 1", "", "# c", "  b", "...", "- x", "x\r", "---\r", "a\rb"}
	// Few: the line scanner allocates a megabyte each time.
	for range 2000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(lines[r.IntN(len(lines))])
			b.WriteByte('\n')
		}
		s := b.String()
		switch r.IntN(6) {
		case 0:
			s = strings.TrimSuffix(s, "\n")
		case 1:
			s = strings.ReplaceAll(s, "\n", "\r\n")
		case 2:
			s = strings.TrimSuffix(s, "\n") + "\r"
		}
		want := splitDocsByScanner([]byte(s))
		got := splitDocs([]byte(s))
		if len(got) != len(want) {
			t.Fatalf("%q: %d documents, by the scanner %d", s, len(got), len(want))
		}
		for i := range got {
			if got[i].line != want[i].line || !bytes.Equal(got[i].data, want[i].data) {
				t.Fatalf("%q: document %d is %d %q, by the scanner %d %q", s, i, got[i].line, got[i].data, want[i].line, want[i].data)
			}
		}
	}
}

// splitDocsByScanner splits data as splitDocs says it does, line by line
// with a bufio.Scanner (as the loader did before splitting in place).
func splitDocsByScanner(data []byte) []doc {
	var docs []doc
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	var cur bytes.Buffer
	start, line := 1, 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.HasPrefix(t, "---") && strings.TrimSpace(strings.TrimPrefix(t, "---")) == "" {
			docs = append(docs, doc{line: start, data: append([]byte(nil), cur.Bytes()...)})
			cur.Reset()
			start = line + 1
			continue
		}
		cur.WriteString(t)
		cur.WriteByte('\n')
	}
	return append(docs, doc{line: start, data: cur.Bytes()})
}

// TestSplitYAMLList cuts documents, and declines those it cannot cut
// exactly whatever converting the parts then says.
func TestSplitYAMLList(t *testing.T) {
	tests := []struct {
		name, y    string
		head, tail string
		items      []string
		declined   bool
	}{
		{name: "kubectl's shape", y: "apiVersion: v1\nitems:\n- a: 1\n  b: 2\n- c: 3\nkind: List\n",
			head: "apiVersion: v1\n", items: []string{"- a: 1\n  b: 2\n", "- c: 3\n"}, tail: "kind: List\n"},
		{name: "comments and blank lines go with the item before", y: "# c\n\nitems:  \n\n# x\n- a\n#\n\n- b\n",
			head: "# c\n\n", items: []string{"\n# x\n- a\n#\n\n", "- b\n"}},
		{name: "no newline at the end", y: "items:\n- a\nkind: List", items: []string{"- a\n"}, tail: "kind: List"},
		{name: "a tab in column 0", y: "items:\n- a\n\t\nkind: List\n", declined: true},
		{name: "a tab after a dash", y: "items:\n-\ta\n", declined: true},
		{name: "a directive", y: "%YAML 1.1\nitems:\n- a\n", declined: true},
		{name: "a document end", y: "items:\n- a\n...\n", declined: true},
		{name: "a document start with content", y: "items:\n- a\n--- b\n", declined: true},
		{name: "an indented line before the first item", y: "items:\n  b: 1\n- a\n", declined: true},
		{name: "an indented document", y: "  k: 1\nitems:\n- a\n", declined: true},
		{name: "a sequence document", y: "- k\nitems:\n- a\n", declined: true},
		{name: "a flow document", y: "{k: 1}\nitems:\n- a\n", declined: true},
		{name: "items with a comment", y: "items: # c\n- a\n", declined: true},
		{name: "no items", y: "kind: List\n", declined: true},
		{name: "items without a sequence", y: "items:\nkind: List\n", declined: true},
		{name: "an alias", y: "items:\n- &x a\n- *x\n", declined: true},
		{name: "a carriage return", y: "items:\n- a\r\n", declined: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := splitYAMLList([]byte(tt.y))
			if ok == tt.declined {
				t.Fatalf("split %v, want %v", ok, !tt.declined)
			}
			if !ok {
				return
			}
			var items []string
			for _, it := range p.items {
				items = append(items, string(it))
			}
			got := fmt.Sprintf("%q %q %q", p.head, items, p.tail)
			if want := fmt.Sprintf("%q %q %q", tt.head, tt.items, tt.tail); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

// TestOnlyElement takes the element of arrays of one.
func TestOnlyElement(t *testing.T) {
	tests := map[string]string{`[{"a":[1,2]}]`: `{"a":[1,2]}`, `["x"]`: `"x"`, `[1,2]`: "", `[]`: "", `{}`: "", `[[1],[2]]`: ""}
	for in, want := range tests {
		got, ok := onlyElement([]byte(in))
		if string(got) != want || ok != (want != "") {
			t.Errorf("onlyElement(%s) = %s, %v, want %s", in, got, ok, want)
		}
	}
}
