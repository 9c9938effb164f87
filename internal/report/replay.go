package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ReplayFormats are the -o formats of replay.
var ReplayFormats = []string{"table", "json", "yaml", "csv"}

// WriteReplay renders a replay: table (the summary and the curves as
// terminal charts), json or yaml (the documented Result), csv (the series,
// one row per sample).
func WriteReplay(w io.Writer, r *replay.Result, format string) error {
	switch format {
	case "json", "yaml":
		return writeDocument(w, r, format)
	case "csv":
		return WriteReplayCSV(w, r)
	case "table", "":
		return writeReplayTable(w, r)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// writeDocument writes v as indented JSON or as YAML.
func writeDocument(w io.Writer, v any, format string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}

// WriteReplayCSV writes the series: one row per sample, the columns named
// in the header (time_seconds, time, arrived, pending, running, attempts,
// failed_attempts, wait_p50_seconds, wait_p99_seconds, then per resource
// R: R_capacity, R_allocated, R_allocation, R_arrived_demand,
// R_fragmentation; then pending_PLUGIN per rejecting plugin and the probes).
func WriteReplayCSV(w io.Writer, r *replay.Result) error {
	s := &r.Series
	head := []string{"time_seconds", "time", "arrived", "pending", "running", "attempts", "failed_attempts", "wait_p50_seconds", "wait_p99_seconds"}
	for _, rs := range s.Resources {
		for _, c := range []string{"capacity", "allocated", "allocation", "arrived_demand", "fragmentation"} {
			head = append(head, rs.Name+"_"+c)
		}
	}
	for _, rs := range s.PendingReasons {
		head = append(head, "pending_"+rs.Plugin)
	}
	for _, e := range s.Extra {
		head = append(head, e.Name)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	row := make([]string, 0, len(head))
	for i, t := range s.Time {
		row = row[:0]
		at := r.Summary.Start.Add(time.Duration(t * float64(time.Second)))
		row = append(row, f(t), at.UTC().Format(time.RFC3339Nano), strconv.Itoa(s.Arrived[i]), strconv.Itoa(s.Pending[i]), strconv.Itoa(s.Running[i]),
			strconv.Itoa(s.Attempts[i]), strconv.Itoa(s.FailedAttempts[i]), f(s.WaitP50[i]), f(s.WaitP99[i]))
		for _, rs := range s.Resources {
			ratio := 0.0
			if rs.Capacity[i] > 0 {
				ratio = float64(rs.Allocated[i]) / float64(rs.Capacity[i])
			}
			row = append(row, strconv.FormatInt(rs.Capacity[i], 10), strconv.FormatInt(rs.Allocated[i], 10), f(ratio),
				strconv.FormatInt(rs.ArrivedDemand[i], 10), f(rs.Fragmentation[i]))
		}
		for _, rs := range s.PendingReasons {
			row = append(row, strconv.Itoa(rs.Pods[i]))
		}
		for _, e := range s.Extra {
			row = append(row, f(e.Values[i]))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeReplayTable(w io.Writer, r *replay.Result) error {
	s := &r.Summary
	span := s.End.Sub(s.Start)
	rate := 0.0
	if s.DurationSeconds > 0 {
		rate = float64(s.Pods) / s.DurationSeconds
	}
	fmt.Fprintf(w, "Replayed %d pods on %d nodes over %s of virtual time (%s to %s), %d instants, time: %s (%.0f pods/s)\n\n",
		s.Pods, s.Nodes, seconds(span.Seconds()), s.Start.UTC().Format(time.RFC3339), s.End.UTC().Format(time.RFC3339), s.Instants, fmtDuration(s.DurationSeconds), rate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PODS\tplaced %d\trunning %d\tdeparted %d\tdeleted %d\tpreempted %d\tpending %d\tnot arrived %d\n",
		s.Placed, s.Running, s.Departed, s.Deleted, s.Preempted, s.Pending, s.NotArrived)
	fmt.Fprintf(tw, "ATTEMPTS\t%d\t%d failed\n", s.Attempts, s.FailedAttempts)
	fmt.Fprintf(tw, "WAIT\tp50 %s\tp99 %s\tmax %s\n", seconds(s.WaitP50Seconds), seconds(s.WaitP99Seconds), seconds(s.WaitMaxSeconds))
	fmt.Fprintf(tw, "NODES USED\t%d of %d\n", s.NodesUsed, s.Nodes)
	if len(r.PodGroups) > 0 {
		fmt.Fprintf(tw, "POD GROUPS\t%d\tscheduled %d\twith members pending %d\n", s.PodGroups, s.PodGroupsScheduled, s.PodGroupsPending)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tCAPACITY\tMEAN ALLOC\tPEAK ALLOC\tFINAL ALLOC\tMEAN FRAG\tIMBALANCE")
	for _, rs := range s.Resources {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.3f\n", rs.Name, schedcore.FormatQuantity(v1.ResourceName(rs.Name), rs.Capacity), percent(rs.MeanAllocation),
			percent(rs.PeakAllocation), percent(rs.FinalAllocation), percent(rs.MeanFragmentation), rs.Imbalance)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	sp := span.Seconds()
	for _, rs := range r.Series.Resources {
		vals := make([]float64, len(rs.Allocated))
		for i := range vals {
			if rs.Capacity[i] > 0 {
				vals[i] = float64(rs.Allocated[i]) / float64(rs.Capacity[i])
			}
		}
		fmt.Fprintln(w)
		writeChart(w, "allocated "+rs.Name+" (% of capacity)", Curve{Times: r.Series.Time, Values: vals, Span: sp}, s.Start, 0, percent)
	}
	fmt.Fprintln(w)
	writeChart(w, "pending pods", Curve{Times: r.Series.Time, Values: ints(r.Series.Pending), Span: sp}, s.Start, 0, count)
	fmt.Fprintln(w)
	writeChart(w, fmt.Sprintf("wait p99 (pods placed in the last %s)", seconds(r.Series.WaitWindowSeconds)), Curve{Times: r.Series.Time, Values: r.Series.WaitP99, Span: sp}, s.Start, 0, seconds)
	if len(r.Busiest) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		names := make([]string, 0, len(s.Resources))
		for _, rs := range s.Resources {
			names = append(names, rs.Name)
		}
		fmt.Fprintf(tw, "BUSIEST NODE\tPLACED\t%s\n", strings.ToUpper(strings.Join(names, "\t")))
		for i, n := range r.Busiest {
			if i == 5 {
				break
			}
			cells := make([]string, 0, len(names))
			for _, name := range names {
				if v, ok := n.MeanAllocation[name]; ok {
					cells = append(cells, percent(v))
				} else {
					cells = append(cells, "-")
				}
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\n", n.Node, n.Placed, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Pending) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PENDING AT THE END\tSINCE\tATTEMPTS\tMESSAGE")
		for i, p := range r.Pending {
			if i == 10 {
				fmt.Fprintf(tw, "... %d more\t\t\t\n", len(r.Pending)-10)
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Pod, p.Since.UTC().Format(time.RFC3339), p.Attempts, firstLine(p.Message))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return writeReplayGroups(w, r.PodGroups)
}

// writeReplayGroups lists the PodGroups: members placed and pending, when
// the first was placed, and the PodGroupInitiallyScheduled condition.
func writeReplayGroups(w io.Writer, groups []replay.GroupResult) error {
	if len(groups) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POD GROUP\tMIN\tMEMBERS\tPLACED\tPENDING\tFIRST PLACED\tSCHEDULED\tMESSAGE")
	for _, g := range groups {
		minCount, first, status, msg := "-", "-", "-", "-"
		if g.Policy == "gang" {
			minCount = fmt.Sprint(g.MinCount)
		}
		if g.FirstPlaced != nil {
			first = g.FirstPlaced.UTC().Format(time.RFC3339)
		}
		if c := g.Condition; c != nil {
			status = c.Status + " (" + c.Reason + ")"
			if c.Message != "" {
				msg = firstLine(c.Message)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", g.PodGroup, minCount, g.Members, g.Placed, g.Pending, first, status, msg)
	}
	return tw.Flush()
}

func ints(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// topReasons returns the plugins by their peak of pending pods, most first.
func topReasons(rs []replay.ReasonSeries) []replay.ReasonSeries {
	out := append([]replay.ReasonSeries(nil), rs...)
	peak := func(r replay.ReasonSeries) int {
		m := 0
		for _, v := range r.Pods {
			m = max(m, v)
		}
		return m
	}
	sort.SliceStable(out, func(i, j int) bool { return peak(out[i]) > peak(out[j]) })
	return out
}
