// Package report renders results: the dry-run report and, later, explain
// diagnoses, as tables for people and as stable JSON/YAML for scripts.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// Formats accepted by -o.
var Formats = []string{"table", "wide", "json", "yaml"}

// ValidFormat reports whether f is one of Formats.
func ValidFormat(f string) bool {
	for _, x := range Formats {
		if x == f {
			return true
		}
	}
	return false
}

// DryRun is the dry-run's machine-readable result. Its JSON form is the
// documented schema (docs/dryrun-schema.md); fields are only ever added.
type DryRun struct {
	// Placements are in the order they were committed.
	Placements []Placement `json:"placements"`
	// Unschedulable are the pods left pending, with kube's FitError message.
	Unschedulable []Unschedulable `json:"unschedulable"`
	// Evictions are preemption victims, in order.
	Evictions []Eviction `json:"evictions"`
	// Groups are the gangs (Coscheduling pod groups) of the pending pods,
	// by name; absent when there are none.
	Groups []Group `json:"groups,omitempty"`
	// PodGroups are the Workload API's PodGroups (scheduling.k8s.io
	// v1beta1, with GenericWorkload) that have pending members, in the
	// cluster's order; absent when there are none.
	PodGroups []PodGroup `json:"podGroups,omitempty"`
	// Nominations are the nominated nodes preemption set, in order.
	Nominations []Nomination `json:"nominations,omitempty"`
	Summary     Summary      `json:"summary"`
	// Nodes is per-node utilisation before and after.
	Nodes []NodeUsage `json:"nodes"`
}

// Placement is one committed pod.
type Placement struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
	// Score is the chosen node's total score (0 when only one node was feasible).
	Score int64 `json:"score"`
	// Feasible counts the nodes that passed the filters.
	Feasible int `json:"feasibleNodes"`
	// RunnerUp is the best other node, when there was one.
	RunnerUp *NodeScore `json:"runnerUp,omitempty"`
	// Attempts counts scheduling attempts of the pod.
	Attempts int `json:"attempts"`
	// Devices are the DRA devices allocated to the pod's claims, in claim
	// and request order; absent for pods without claims.
	Devices []AllocatedDevice `json:"devices,omitempty"`
}

// AllocatedDevice is one device of a ResourceClaim's allocation.
type AllocatedDevice struct {
	// Claim is the ResourceClaim, "namespace/name".
	Claim string `json:"claim"`
	// Request is the claim's request (or "request/subrequest").
	Request string `json:"request"`
	Driver  string `json:"driver"`
	Pool    string `json:"pool"`
	Device  string `json:"device"`
	// AdminAccess marks a device used with admin access (not taken).
	AdminAccess bool `json:"adminAccess,omitempty"`
	// Shared marks a share of a device with consumable capacity.
	Shared bool `json:"shared,omitempty"`
}

// String renders the device as "driver/pool/device".
func (d AllocatedDevice) String() string { return d.Driver + "/" + d.Pool + "/" + d.Device }

// NodeScore is a node with its total score.
type NodeScore struct {
	Node  string `json:"node"`
	Score int64  `json:"score"`
}

// Unschedulable is a pod that could not be placed.
type Unschedulable struct {
	Pod string `json:"pod"`
	// Message is kube-scheduler's FitError text, word for word.
	Message string `json:"message"`
	// Reason is the PodScheduled condition reason: Unschedulable or SchedulerError.
	Reason string `json:"reason"`
	// Plugins are the plugins that rejected the pod.
	Plugins []string `json:"plugins,omitempty"`
	// Group is the pod's gang ("namespace/name"), if it is in one.
	Group string `json:"group,omitempty"`
	// After counts placements committed when the pod last failed.
	After    int `json:"after"`
	Attempts int `json:"attempts"`
}

// Group statuses.
const (
	GroupScheduled     = "Scheduled"
	GroupUnschedulable = "Unschedulable"
)

// Group is one gang: placed all together (at least minMember pods) or not
// at all.
type Group struct {
	// Group is "namespace/name" of the PodGroup.
	Group     string `json:"group"`
	MinMember int    `json:"minMember"`
	// Pods counts the group's pending pods; Scheduled those placed.
	Pods      int `json:"pods"`
	Scheduled int `json:"scheduled"`
	// Status is Scheduled or Unschedulable.
	Status string `json:"status"`
	// Pod and Message give, for an unschedulable group, the member whose
	// failure is the group's: the last to fail on its own (not rejected
	// for its siblings' sake or timed out), else a member never tried.
	Pod     string `json:"pod,omitempty"`
	Message string `json:"message,omitempty"`
}

// PodGroup is a Workload API PodGroup after the run: which of its pending
// members were bound and which were not, and the PodGroupInitiallyScheduled
// condition the pod-group cycles left on it (kube's words).
type PodGroup struct {
	// PodGroup is "namespace/name".
	PodGroup string `json:"podGroup"`
	// Policy is "gang" or "basic"; MinCount is the gang's (0 for basic).
	Policy   string `json:"policy"`
	MinCount int32  `json:"minCount,omitempty"`
	// Bound are the pending members placed ("namespace/name"), Unbound
	// those left pending, in queue order.
	Bound   []string `json:"bound"`
	Unbound []string `json:"unbound"`
	// Condition is PodGroupInitiallyScheduled, absent if no cycle wrote it.
	Condition *PodGroupCondition `json:"condition,omitempty"`
}

// PodGroupCondition is a PodGroup's PodGroupInitiallyScheduled condition.
type PodGroupCondition struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// Eviction is a preemption victim.
type Eviction struct {
	Pod       string `json:"pod"`
	Node      string `json:"node"`
	Preemptor string `json:"preemptor"`
}

// Nomination is a pod's status.nominatedNodeName set by preemption: the
// node it waits for while its victims go.
type Nomination struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// Summary totals the run.
type Summary struct {
	Scheduled       int      `json:"scheduled"`
	Unschedulable   int      `json:"unschedulable"`
	Nodes           int      `json:"nodes"`
	Pending         int      `json:"pending"`
	DurationSeconds float64  `json:"durationSeconds"`
	PodsPerSecond   float64  `json:"podsPerSecond"`
	Profiles        []string `json:"profiles"`
}

// NodeUsage is one node's requested resources before and after.
type NodeUsage struct {
	Node        string           `json:"node"`
	Allocatable map[string]int64 `json:"allocatable"`
	Before      map[string]int64 `json:"before"`
	After       map[string]int64 `json:"after"`
	PodsBefore  int              `json:"podsBefore"`
	PodsAfter   int              `json:"podsAfter"`
}

// WriteDryRun renders the report in the given format.
func WriteDryRun(w io.Writer, r *DryRun, format string) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "table", "wide", "":
		return writeTable(w, r, format == "wide")
	}
	return fmt.Errorf("unknown output format %q", format)
}

func writeTable(w io.Writer, r *DryRun, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	devices := wide && hasDevices(r.Placements)
	if devices {
		fmt.Fprintln(tw, "POD\tNODE\tSCORE\tFEASIBLE\tRUNNER-UP\tDEVICES\tREASON")
	} else if wide {
		fmt.Fprintln(tw, "POD\tNODE\tSCORE\tFEASIBLE\tRUNNER-UP\tREASON")
	} else {
		fmt.Fprintln(tw, "POD\tNODE\tREASON")
	}
	for _, p := range r.Placements {
		if wide {
			ru := "-"
			if p.RunnerUp != nil {
				ru = fmt.Sprintf("%s (%d)", p.RunnerUp.Node, p.RunnerUp.Score)
			}
			if devices {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", p.Pod, p.Node, p.Score, p.Feasible, ru, deviceList(p.Devices), "scheduled")
			} else {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", p.Pod, p.Node, p.Score, p.Feasible, ru, "scheduled")
			}
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Pod, p.Node, "scheduled")
		}
	}
	for _, u := range r.Unschedulable {
		msg := u.Message
		if !wide {
			msg = ShortReason(msg)
		}
		if devices {
			fmt.Fprintf(tw, "%s\t%s\t-\t0\t-\t-\t%s\n", u.Pod, "<unschedulable>", msg)
		} else if wide {
			fmt.Fprintf(tw, "%s\t%s\t-\t0\t-\t%s\n", u.Pod, "<unschedulable>", msg)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Pod, "<unschedulable>", msg)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s := r.Summary
	fmt.Fprintf(w, "\nScheduled: %d, unschedulable: %d, evicted: %d, nodes: %d, time: %s (%.0f pods/s)\n",
		s.Scheduled, s.Unschedulable, len(r.Evictions), s.Nodes, fmtDuration(s.DurationSeconds), s.PodsPerSecond)
	if len(r.Evictions) > 0 {
		fmt.Fprintln(w, "\nEvictions:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "VICTIM\tNODE\tPREEMPTOR")
		for _, e := range r.Evictions {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Pod, e.Node, e.Preemptor)
		}
		_ = tw.Flush()
	}
	writeGroups(w, r.Groups, wide)
	writePodGroups(w, r.PodGroups, wide)
	return writeUsage(w, r.Nodes)
}

func hasDevices(ps []Placement) bool {
	for _, p := range ps {
		if len(p.Devices) > 0 {
			return true
		}
	}
	return false
}

// deviceList renders a pod's devices ("-" for none): each as
// driver/pool/device, with "(admin)" for admin access.
func deviceList(ds []AllocatedDevice) string {
	if len(ds) == 0 {
		return "-"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
		if d.AdminAccess {
			parts[i] += "(admin)"
		}
	}
	return strings.Join(parts, ",")
}

// writeGroups lists the gangs: each is placed whole or reported as one
// unschedulable group with the reason of the member that failed.
func writeGroups(w io.Writer, groups []Group, wide bool) {
	if len(groups) == 0 {
		return
	}
	fmt.Fprintln(w, "\nGroups:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tSTATUS\tPLACED\tMIN\tREASON")
	for _, g := range groups {
		reason := "-"
		if g.Status != GroupScheduled {
			msg := g.Message
			if !wide {
				msg = ShortReason(msg)
			}
			reason = g.Pod + ": " + msg
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%s\n", g.Group, g.Status, g.Scheduled, g.Pods, g.MinMember, reason)
	}
	_ = tw.Flush()
}

// writePodGroups lists the Workload API PodGroups: members bound of those
// pending, and the PodGroupInitiallyScheduled condition.
func writePodGroups(w io.Writer, groups []PodGroup, wide bool) {
	if len(groups) == 0 {
		return
	}
	fmt.Fprintln(w, "\nPod groups:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PODGROUP\tPOLICY\tBOUND\tMIN\tSCHEDULED\tREASON\tMESSAGE")
	for _, g := range groups {
		minCount := "-"
		if g.Policy == "gang" {
			minCount = fmt.Sprint(g.MinCount)
		}
		status, reason, msg := "-", "-", "-"
		if c := g.Condition; c != nil {
			status, reason = c.Status, c.Reason
			if c.Message != "" {
				msg = c.Message
				if !wide && len(msg) > 80 {
					msg = msg[:77] + "..."
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", g.PodGroup, g.Policy, len(g.Bound), len(g.Bound)+len(g.Unbound), minCount, status, reason, msg)
	}
	_ = tw.Flush()
}

// ShortReason trims the FitError message to its reasons, without the
// "0/N nodes are available: " prefix and the preemption suffix.
func ShortReason(msg string) string {
	if i := strings.Index(msg, " nodes are available: "); i >= 0 && strings.HasPrefix(msg, "0/") {
		msg = msg[i+len(" nodes are available: "):]
	}
	if i := strings.Index(msg, " preemption: "); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSuffix(msg, ".")
}

func fmtDuration(sec float64) string {
	switch {
	case sec < 1e-3:
		return fmt.Sprintf("%.0fµs", sec*1e6)
	case sec < 1:
		return fmt.Sprintf("%.1fms", sec*1e3)
	default:
		return fmt.Sprintf("%.2fs", sec)
	}
}

// resource columns: cpu, memory, then extended resources in name order.
func usageColumns(nodes []NodeUsage) []string {
	ext := map[string]bool{}
	for _, n := range nodes {
		for k, v := range n.After {
			if k != "cpu" && k != "memory" && k != "pods" && (v > 0 || n.Before[k] > 0) {
				ext[k] = true
			}
		}
	}
	cols := []string{"cpu", "memory"}
	var more []string
	for k := range ext {
		more = append(more, k)
	}
	sort.Strings(more)
	return append(cols, more...)
}

func writeUsage(w io.Writer, nodes []NodeUsage) error {
	if len(nodes) == 0 {
		return nil
	}
	cols := usageColumns(nodes)
	fmt.Fprintln(w, "\nNode utilisation (requested/allocatable, before -> after):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	hdr := []string{"NODE"}
	for _, c := range cols {
		hdr = append(hdr, strings.ToUpper(c))
	}
	hdr = append(hdr, "PODS")
	fmt.Fprintln(tw, strings.Join(hdr, "\t"))
	for _, n := range nodes {
		row := []string{n.Node}
		for _, c := range cols {
			row = append(row, fmt.Sprintf("%s -> %s", pct(n.Before[c], n.Allocatable[c]), pct(n.After[c], n.Allocatable[c])))
		}
		row = append(row, fmt.Sprintf("%d -> %d/%d", n.PodsBefore, n.PodsAfter, n.Allocatable["pods"]))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func pct(used, alloc int64) string {
	if alloc <= 0 {
		if used == 0 {
			return "-"
		}
		return "over"
	}
	return fmt.Sprintf("%d%%", used*100/alloc)
}
