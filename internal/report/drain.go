package report

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
)

// WriteDrain renders a drain report: a table (wide: full messages and
// every node's utilisation), JSON or YAML.
func WriteDrain(w io.Writer, r *Drain, format string) error {
	if ok, err := writeStructured(w, r, format); ok {
		return err
	}
	wide := format == "wide"
	var names []string
	for _, n := range r.Nodes {
		names = append(names, n.Node)
	}
	fmt.Fprintf(w, "Drain (%s): %s\n", r.Action, strings.Join(names, ", "))
	for _, n := range r.Nodes {
		if !n.Drained {
			fmt.Fprintf(w, "  %s is not drained: kubectl drain refuses it: %s\n", n.Node, n.Refusal)
		}
	}
	fmt.Fprintln(w)
	short := func(msg string) string {
		if wide {
			return msg
		}
		return ShortReason(msg)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tFROM\tTO\tREASON")
	for _, m := range r.Moves {
		to, reason := m.To, short(m.Reason)
		if to == "" {
			to = "<pending>"
		}
		if m.LocalStorage {
			reason += " (emptyDir data lost)"
		}
		if m.Nominated != "" {
			reason += " (after preempting pods there)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Pod, m.From, to, reason)
	}
	for _, x := range r.Refused {
		why := x.Message
		if x.Cause != "" {
			why = x.Cause
		}
		if x.Budget != "" {
			why = "PodDisruptionBudget " + x.Budget + ": " + why
		}
		fmt.Fprintf(tw, "%s\t%s\t<refused>\t%s\n", x.Pod, x.Node, why)
	}
	for _, l := range r.Lost {
		reason := l.Reason
		if l.LocalStorage {
			reason += " (emptyDir data lost)"
		}
		fmt.Fprintf(tw, "%s\t%s\t<lost>\t%s\n", l.Pod, l.Node, reason)
	}
	for _, s := range r.Stay {
		fmt.Fprintf(tw, "%s\t%s\t<stays>\t%s\n", s.Pod, s.Node, s.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Preempted) > 0 {
		fmt.Fprintln(w, "\nPreempted elsewhere by re-placed pods:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "VICTIM\tNODE\tPREEMPTOR")
		for _, e := range r.Preempted {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Pod, e.Node, e.Preemptor)
		}
		_ = tw.Flush()
	}
	if err := writeDrainGangs(w, r.Gangs, wide); err != nil {
		return err
	}
	s := r.Summary
	fmt.Fprintf(w, "\nEvicted: %d, placed: %d, pending: %d, lost: %d, refused: %d, stay: %d, preempted: %d",
		s.Evicted, s.Placed, s.Pending, s.Lost, s.Refused, s.Stay, s.Preempted)
	if len(r.Gangs) > 0 {
		fmt.Fprintf(w, ", gangs broken: %d of %d", s.BrokenGangs, len(r.Gangs))
	}
	fmt.Fprintln(w)
	nodes := r.Utilisation
	if !wide {
		nodes = changed(nodes)
	}
	if err := writeUsage(w, nodes); err != nil {
		return err
	}
	if r.Complete {
		fmt.Fprintln(w, "\nEvery pod that leaves finds a node.")
	} else {
		fmt.Fprintln(w, "\nSome pods would not find a node, or could not leave (exit status 3).")
	}
	return nil
}

// writeDrainGangs lists the PodGroups that lose members: how many of
// their evicted members are re-placed, pending or lost, and, for a broken
// gang, why (the message cut to 80 characters unless wide).
func writeDrainGangs(w io.Writer, gangs []DrainGang, wide bool) error {
	if len(gangs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nPod groups that lose members (kube binds a gang's pending members together or not at all):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PODGROUP\tMIN\tMEMBERS\tEVICTED\tPLACED\tPENDING\tLOST\tGANG\tMESSAGE")
	for _, g := range gangs {
		minCount := "-"
		if g.Policy == "gang" {
			minCount = fmt.Sprint(g.MinCount)
		}
		state, msg := "whole", "-"
		if g.Broken {
			state, msg = "broken", g.Message
			if !wide && len(msg) > 80 {
				msg = msg[:77] + "..."
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", g.PodGroup, minCount, g.Members, g.Evicted, g.Placed, g.Pending, g.Lost, state, msg)
	}
	return tw.Flush()
}

// changed keeps the nodes whose use changes.
func changed(nodes []NodeUsage) []NodeUsage {
	var out []NodeUsage
	for _, n := range nodes {
		if n.PodsBefore != n.PodsAfter || !reflect.DeepEqual(n.Before, n.After) {
			out = append(out, n)
		}
	}
	return out
}
