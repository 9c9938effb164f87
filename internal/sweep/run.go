package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/fgd"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// CellResult is a cell's result file, <results>/<cell id>.json.
type CellResult struct {
	ID   string   `json:"id"`
	Hash string   `json:"hash"`
	Axes CellAxes `json:"axes"`
	// Result is the verb's record, as the study's record field asks.
	Result json.RawMessage `json:"result"`
}

// ReplayRecord is what a replay cell records. Summary.DurationSeconds (wall
// time) is left out so that a study always gives the same bytes.
type ReplayRecord struct {
	Summary replay.Summary       `json:"summary"`
	Series  *replay.Series       `json:"series,omitempty"`
	Pending *[]replay.PendingPod `json:"pending,omitempty"`
	Busiest *[]replay.NodeStat   `json:"busiest,omitempty"`
	// FGD is the FGD artifact's measures of a trace with fgdTune.
	FGD *FGDRecord `json:"fgd,omitempty"`
}

// FGDRecord is one FGD experiment's measures, as the artifact's analysis
// computes them (fgd.Metrics): at each arrived GPU demand of 0..130% of
// the GPU capacity, the GPU allocation and the fragmented GPU capacity in
// percent (null where the run has no event near that demand).
type FGDRecord struct {
	// Pods arrived, Placed of them placed, Failed found no node.
	Pods   int `json:"pods"`
	Placed int `json:"placed"`
	Failed int `json:"failed"`
	// Alloc[X] and Frag[X] are at X% arrived demand.
	Alloc []*float64 `json:"alloc"`
	Frag  []*float64 `json:"frag"`
	// UnallocatedAt130 is the GPUs left unallocated at 130%.
	UnallocatedAt130 *float64 `json:"unallocatedAt130"`
}

func fgdRecord(r *fgd.Run) *FGDRecord {
	num := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	rec := &FGDRecord{Pods: r.Pods, Placed: r.Placed, Failed: r.Metrics.Failed, UnallocatedAt130: num(r.Metrics.UnallocatedAt130)}
	for x := range r.Metrics.Alloc {
		rec.Alloc = append(rec.Alloc, num(r.Metrics.Alloc[x]))
		rec.Frag = append(rec.Frag, num(r.Metrics.Frag[x]))
	}
	return rec
}

// RunOptions say where results go and how many cells run at once.
type RunOptions struct {
	// Dir is the results directory (created if need be).
	Dir string
	// Workers run cells side by side (0: one per core).
	Workers int
	// Resume keeps the cells whose result is there and was recorded for
	// the same cell definition. Without it, a result already there is an
	// error: nothing finished is overwritten.
	Resume bool
	// Only, when set, are the indexes of the cells to run (a chunk of an
	// Indexed Job); the others are not looked at.
	Only []int
	// Progress is called once before the first cell with 0 and the cells
	// to run, then after each cell that ends with the cells done, from one
	// goroutine at a time.
	Progress func(done, total int)
	// Tick, when set, is called now and then while cells run (from their
	// workers, at once): a progress line can say how long it has been
	// while each cell takes minutes.
	Tick func()
	// CellDone is called after a cell's result is written, from the
	// worker that ran it.
	CellDone func(Cell)
}

// Stats count what a run did.
type Stats struct {
	// Ran counts the cells run, Kept those whose result was there.
	Ran, Kept int
}

// ResultPath is a cell's result file in dir.
func ResultPath(dir string, c Cell) string { return filepath.Join(dir, c.ID+".json") }

// Run runs the plan's cells, workers at a time, writing each cell's result
// atomically as it ends. Before running any, it checks the results already
// in the directory: a stale one (recorded for another definition of its
// cell) or, without Resume, any one is bad input, and nothing runs.
func (p *Plan) Run(ctx context.Context, o RunOptions) (Stats, error) {
	cells := p.Cells
	if o.Only != nil {
		cells = make([]Cell, 0, len(o.Only))
		for _, i := range o.Only {
			if i < 0 || i >= len(p.Cells) {
				return Stats{}, inputErrorf("--cell %d: the study has %d cells (0 to %d)", i, len(p.Cells), len(p.Cells)-1)
			}
			if slices.ContainsFunc(cells, func(c Cell) bool { return c.Index == i }) {
				return Stats{}, inputErrorf("--cell %d is given twice", i)
			}
			cells = append(cells, p.Cells[i])
		}
	}
	var todo []Cell
	var st Stats
	for _, c := range cells {
		r, err := ReadResult(o.Dir, c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			todo = append(todo, c)
		case err != nil:
			return Stats{}, err
		case r.Hash != c.Hash:
			return Stats{}, inputErrorf("cell %s: %s was recorded for another definition of this cell (the study or its inputs changed): move it away or give another --results; it is not overwritten", c.ID, ResultPath(o.Dir, c))
		case !o.Resume:
			return Stats{}, inputErrorf("cell %s: %s exists: --resume keeps finished cells and runs the others; it is not overwritten", c.ID, ResultPath(o.Dir, c))
		default:
			st.Kept++
		}
	}
	if len(todo) == 0 {
		return st, nil
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return st, fmt.Errorf("creating the results directory: %w", err)
	}
	if o.Progress != nil {
		o.Progress(0, len(todo))
	}
	err := replay.Parallel(ctx, len(todo), o.Workers, o.Progress, func(ctx context.Context, i int) error {
		c := todo[i]
		data, err := p.runCell(ctx, c, o.Tick)
		if err != nil {
			return fmt.Errorf("cell %s: %w", c.ID, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := snapshot.WriteFile(ResultPath(o.Dir, c), data, 0o644); err != nil {
			return fmt.Errorf("cell %s: writing %s: %w", c.ID, ResultPath(o.Dir, c), err)
		}
		if o.CellDone != nil {
			o.CellDone(c)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Ran = len(todo)
	return st, nil
}

// runCell runs one cell and returns its result file. The replay's result
// is dropped as soon as its record is encoded: a sweep holds one replay per
// worker, not one per cell.
func (p *Plan) runCell(ctx context.Context, c Cell, tick func()) ([]byte, error) {
	switch p.Study.Verb {
	case VerbDryRun:
		return p.runDryRun(ctx, c)
	case VerbCapacity:
		return p.runCapacity(ctx, c)
	}
	if ft := p.fgd[c.trace]; ft != nil {
		pol := p.policies[c.config][c.trace]
		pol.Features, pol.Registry = p.features[c.gates], p.extra
		run, err := fgd.RunOne(ctx, ft, pol, *c.Axes.Seed, p.Study.Axes.Traces[c.trace].FGDTune, 1)
		if err != nil {
			return nil, err
		}
		rec := ReplayRecord{Summary: run.Summary, FGD: fgdRecord(run)}
		rec.Summary.DurationSeconds = 0
		return cellFile(c, rec)
	}
	eo := engine.Options{Config: p.config(c), Registry: p.registry, Features: p.features[c.gates], NoPreemption: p.Study.NoPreemption}
	if c.Axes.Seed != nil {
		eo.Seed, eo.UseSeed = *c.Axes.Seed, true
	}
	ro := replay.Options{Options: eo, Until: p.until, Parallelism: 1}
	if tick != nil {
		ro.Progress = func(int, int) { tick() }
	}
	res, err := replay.Run(ctx, p.traces[c.trace], ro)
	if err != nil {
		return nil, err
	}
	rec := ReplayRecord{Summary: res.Summary}
	rec.Summary.DurationSeconds = 0
	if p.Study.Records(RecordSeries) {
		rec.Series = &res.Series
	}
	if p.Study.Records(RecordPending) {
		rec.Pending = &res.Pending
	}
	if p.Study.Records(RecordBusiest) {
		rec.Busiest = &res.Busiest
	}
	return cellFile(c, rec)
}

// cellFile is a cell's result file with its record.
func cellFile(c Cell, rec any) ([]byte, error) {
	result, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(CellResult{ID: c.ID, Hash: c.Hash, Axes: c.Axes, Result: result}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// ReadResult reads a cell's result file in dir; a missing file's error is
// fs.ErrNotExist.
func ReadResult(dir string, c Cell) (*CellResult, error) {
	path := ResultPath(dir, c)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("cell %s: reading %s: %w", c.ID, path, unwrapPath(err))
	}
	var r CellResult
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil || r.ID != c.ID {
		if err == nil {
			err = fmt.Errorf("it holds cell %q", r.ID)
		}
		return nil, inputErrorf("cell %s: %s is not this cell's result: %v", c.ID, path, err)
	}
	return &r, nil
}
