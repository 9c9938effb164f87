package snapshot

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// withAhead runs f with Lists of least items and more added while decoded
// (math.MaxInt: none), on two cores at least.
func withAhead(least int, f func()) {
	defer func(was int) { aheadItems = was }(aheadItems)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	aheadItems = least
	f()
}

// loadAheadAndFirst loads data with big Lists added while decoded (from
// least items) and with every List decoded first.
func loadAheadAndFirst(file string, data []byte, least int) (ahead, first *Cluster, aheadErr, firstErr error) {
	ahead, first = &Cluster{}, &Cluster{}
	withAhead(least, func() { aheadErr = ahead.AddData(file, data) })
	withAhead(math.MaxInt, func() { firstErr = first.AddData(file, data) })
	return ahead, first, aheadErr, firstErr
}

// bigList is a JSON List of n nodes and pods, with item i replaced by
// with[i]; one item a line, as kubectl writes none but errors then name
// their line.
func bigList(n int, with map[int]string) []byte {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[` + "\n")
	for i := range n {
		it, ok := with[i]
		switch {
		case ok:
		case i%3 == 0:
			it = fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n%d","labels":{"zone":"z%d"}},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}`, i, i%5)
		default:
			it = fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns%d"},"spec":{"nodeName":"n%d","containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"100m","memory":"%dMi"}}}]}}`, i, i%7, i-i%3, 64+i%100)
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(it)
	}
	b.WriteString("\n]}\n")
	return []byte(b.String())
}

// declined are items the typed path leaves to the map path, which adds
// them.
var declined = map[int]string{
	7:    `{"apiVersion":"v1","kind":"Node","metadata":{"name":"mf","managedFields":[{"fieldsV1":{"f:b":{},"f:a":{}}}]}}`,
	300:  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`,
	4100: `{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"g","namespace":"ns1"}}`,
	8999: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"e","namespace":"x"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}],"activeDeadlineSeconds":1e3}}`,
}

// TestAddAheadLoadsAsDecodingFirst loads every dump under testdata/ and
// examples/ (also as JSON) with each List added while decoded, and a
// generated List of 9000 items at the default size, and wants the same
// objects in the same order, origins and errors as decoding first (and,
// for the generated one, as the map path).
func TestAddAheadLoadsAsDecodingFirst(t *testing.T) {
	var files []string
	for _, dir := range []string{"../../testdata", "../../examples"} {
		fs, err := manifestFiles(dir)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	lists := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		forms := map[string][]byte{filepath.Base(f): data}
		if js, err := yaml.YAMLToJSON(data); err == nil && strings.HasSuffix(f, ".yaml") {
			forms["as JSON"] = js
		}
		for form, data := range forms {
			if l, ok := peekList(data); ok && l.kind == "List" && len(l.items) > 0 {
				lists++
			}
			a, b, ea, eb := loadAheadAndFirst("f", data, 1)
			sameLoads(t, f+" ("+form+")", "decoded first", a, b, ea, eb)
		}
	}
	if lists == 0 {
		t.Fatal("no JSON List among the dumps")
	}
	data := bigList(9000, declined)
	a, b, ea, eb := loadAheadAndFirst("big.json", data, aheadItems)
	if sameLoads(t, "9000 items", "decoded first", a, b, ea, eb) {
		if len(a.Nodes) != 3000 || len(a.Pods) != 5998 || len(a.Others) != 1 {
			t.Errorf("9000 items: %d nodes, %d pods, %d others", len(a.Nodes), len(a.Pods), len(a.Others))
		}
		if o, _ := a.OriginOf(a.Pods[len(a.Pods)-1]); o.Where != "items[8999]" {
			t.Errorf("9000 items: last pod from %v", o)
		}
	}
	m := &Cluster{}
	em := addDataByMap(m, "big.json", data)
	sameLoads(t, "9000 items", "by the map path", a, m, ea, em)
}

// TestAddAheadErrorsAsDecodingFirst puts bad items deep in a List of 9000
// and wants the error decoding first gives, and the map path, one line.
func TestAddAheadErrorsAsDecodingFirst(t *testing.T) {
	malformed := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"x"},"spec":{]}`
	dup := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n0"}}`
	badQ := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"q"},"status":{"allocatable":{"cpu":"4x"}}}`
	cases := map[string]map[int]string{
		"malformed deep":                {8000: malformed},
		"malformed first":               {0: malformed},
		"malformed last":                {8999: malformed},
		"malformed twice":               {5000: malformed, 8000: malformed},
		"duplicate then malformed deep": {50: dup, 8500: malformed},
		"malformed then duplicate":      {4000: malformed, 8500: dup},
		"duplicate deep":                {8500: dup},
		"bad quantity deep":             {8700: badQ},
		"bad quantity then malformed":   {6000: badQ, 8800: malformed},
		"not an object deep":            {7000: `3`},
	}
	for name, with := range cases {
		data := bigList(9000, with)
		a, b, ea, eb := loadAheadAndFirst("big.json", data, aheadItems)
		if ea == nil || strings.Contains(ea.Error(), "\n") {
			t.Errorf("%s: error %q, want one line", name, ea)
		}
		sameLoads(t, name, "decoded first", a, b, ea, eb)
		m := &Cluster{}
		em := addDataByMap(m, "big.json", data)
		sameLoads(t, name, "by the map path", a, m, ea, em)
	}
}
