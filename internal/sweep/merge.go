package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// Merged is a study's results, one per cell in the study's order. Its JSON
// form is the contract of `sweep -o json`; fields are only ever added.
type Merged struct {
	// Verb is the study's verb.
	Verb  string       `json:"verb"`
	Cells []MergedCell `json:"cells"`
}

// MergedCell is one cell's result.
type MergedCell struct {
	ID     string          `json:"id"`
	Axes   CellAxes        `json:"axes"`
	Result json.RawMessage `json:"result"`
}

// Merge reads every cell's result from dir, in the study's order. A cell
// without a result, or with a stale one, is an error naming it.
func (p *Plan) Merge(dir string) (*Merged, error) {
	return p.mergeFrom(func(c Cell) (*CellResult, string, error) {
		r, err := ReadResult(dir, c)
		return r, ResultPath(dir, c), err
	}, dir, "run the sweep (with --resume) first")
}

// mergeFrom merges the results read gives (fs.ErrNotExist for a cell
// without one; where is the result's place, for the errors), found in
// where; hint says what to do when some are missing.
func (p *Plan) mergeFrom(read func(Cell) (*CellResult, string, error), where, hint string) (*Merged, error) {
	m := &Merged{Verb: p.Study.Verb, Cells: make([]MergedCell, 0, len(p.Cells))}
	var missing []string
	for _, c := range p.Cells {
		r, place, err := read(c)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, c.ID)
			continue
		}
		if err != nil {
			return nil, err
		}
		if r.Hash != c.Hash {
			return nil, inputErrorf("cell %s: %s was recorded for another definition of this cell (the study or its inputs changed)", c.ID, place)
		}
		m.Cells = append(m.Cells, MergedCell{ID: c.ID, Axes: c.Axes, Result: r.Result})
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 1 {
			more = fmt.Sprintf(" and %d more", len(missing)-1)
		}
		return nil, inputErrorf("%d of %d cells have no result in %s (cell %s%s): %s", len(missing), len(p.Cells), where, missing[0], more, hint)
	}
	return m, nil
}
