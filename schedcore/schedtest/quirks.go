package schedtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ConformanceQuirks reads a conformance case's quirks.json (see
// testdata/conformance/README.md): the explain files whose recorded state
// is that of another placement count than their afterPlacements, by file
// name ("107.json"), with that count. A case without the file has none.
func ConformanceQuirks(dir string) (map[string]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "quirks.json"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var q map[string]struct {
		AfterPlacements int `json:"afterPlacements"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "quirks.json"), err)
	}
	out := make(map[string]int, len(q))
	for k, v := range q {
		out[strings.TrimPrefix(k, "explain/")] = v.AfterPlacements
	}
	return out, nil
}
