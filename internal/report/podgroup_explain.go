package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PodGroupExplanation is `kubectl sched explain podgroup`: the pod-group
// cycles of one Workload API PodGroup's pending members run on the state
// as listed (the other pending pods left pending), nothing bound.
type PodGroupExplanation struct {
	// PodGroup is "namespace/name"; Policy "gang" or "basic".
	PodGroup string `json:"podGroup"`
	Policy   string `json:"policy"`
	// MinCount is the gang's quorum (0 for basic); Members counts the
	// members known (pending and bound), Bound those already bound.
	MinCount int32 `json:"minCount,omitempty"`
	Members  int   `json:"membersKnown"`
	Bound    int   `json:"alreadyBound"`
	// Fits is true when the pending members the cycle places reach the
	// quorum (for basic: every pending member is placed).
	Fits bool `json:"fits"`
	// Message says why in one line.
	Message string `json:"message"`
	// PodMembers are the pending members, in queue order.
	PodMembers []PodGroupMember `json:"members"`
	// Condition is the PodGroupInitiallyScheduled condition the cycle
	// sets, in kube's words (absent if none was written).
	Condition *PodGroupCondition `json:"condition,omitempty"`
	// Placements are the placements the last pod-group cycle tried
	// (TopologyAwareWorkloadScheduling), in the generator's order.
	Placements []PodGroupPlacement `json:"placements,omitempty"`
	// Evictions are the preemption victims the simulation evicted.
	Evictions []Eviction `json:"evictions,omitempty"`
	// Reasons group the members left over by their message.
	Reasons []PodGroupReason `json:"reasons,omitempty"`
	// TopologyKey is the key of the group's topology constraint, read
	// with TopologyAwareWorkloadScheduling on.
	TopologyKey string `json:"topologyKey,omitempty"`
	// Shortfall, for a group that does not fit and has no topology
	// constraint, is what all the nodes lack for the members left over,
	// in sums (a lower bound; a placement's own is in Placements).
	Shortfall []ResourceShortfall `json:"shortfall,omitempty"`
	// NodesNeeded is how many nodes of a template make the group fit
	// (explain podgroup --node-template).
	NodesNeeded *PodGroupNodesNeeded `json:"nodesNeeded,omitempty"`
}

// PodGroupReason is one message and the members left over with it.
type PodGroupReason struct {
	Message string   `json:"message"`
	Members []string `json:"members"`
}

// PodGroupNodesNeeded is capacity's --min-nodes answer for one copy of
// the group: the fewest template nodes with which it fits whole.
type PodGroupNodesNeeded struct {
	// Template names the node template.
	Template string `json:"template"`
	// Nodes is the answer when Found.
	Nodes int  `json:"nodes"`
	Found bool `json:"found"`
	// Message says what was tried when not Found.
	Message string `json:"message,omitempty"`
}

// PodGroupMember is one pending member: the node it would get, or the
// status message kube would give it. Node is always present in JSON and
// YAML ("" for a member left over).
type PodGroupMember struct {
	Pod     string `json:"pod"`
	Node    string `json:"node"`
	Message string `json:"message,omitempty"`
}

// PodGroupPlacement is one placement a pod-group cycle tried: feasible
// or not (with the group's status there), its total placement score when
// scored (kube scores only when more than one is feasible), and whether
// it was chosen.
type PodGroupPlacement struct {
	Name     string `json:"name"`
	Nodes    int    `json:"nodes"`
	Feasible bool   `json:"feasible"`
	Message  string `json:"message,omitempty"`
	Score    *int64 `json:"score,omitempty"`
	Chosen   bool   `json:"chosen,omitempty"`
	// Shortfall, for a placement that is not feasible, is what its nodes
	// lack for the members, in sums (a lower bound: see ResourceShortfall).
	Shortfall []ResourceShortfall `json:"shortfall,omitempty"`
}

// ResourceShortfall is one resource a set of nodes lacks for a group:
// the members' requests summed, the nodes' free amount summed, and the
// difference. It is a lower bound of what would make the group fit:
// free capacity split over nodes may not hold a member.
type ResourceShortfall struct {
	Resource  string `json:"resource"`
	Requested int64  `json:"requested"`
	Free      int64  `json:"free"`
	Short     int64  `json:"short"`
}

// ShortfallText is "8 nvidia.com/gpu (16 wanted, 8 free)" for each resource.
func ShortfallText(s []ResourceShortfall) string {
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = fmt.Sprintf("%s %s (%s wanted, %s free)", humanQuantity(r.Resource, r.Short), r.Resource, humanQuantity(r.Resource, r.Requested), humanQuantity(r.Resource, r.Free))
	}
	return strings.Join(parts, ", ")
}

// WritePodGroupExplain renders e as table (or wide: the same), json or yaml.
func WritePodGroupExplain(w io.Writer, e *PodGroupExplanation, format string) error {
	if ok, err := writeStructured(w, e, format); ok {
		return err
	}
	return writePodGroupExplainTable(w, e)
}

func writePodGroupExplainTable(w io.Writer, e *PodGroupExplanation) error {
	verdict := "does not fit"
	if e.Fits {
		verdict = "fits"
	}
	fmt.Fprintf(w, "PodGroup:  %s (%s)\n", e.PodGroup, e.Policy)
	quorum := fmt.Sprintf("%d members known (%d bound, %d pending)", e.Members, e.Bound, len(e.PodMembers))
	if e.Policy == "gang" {
		quorum = fmt.Sprintf("minCount %d, ", e.MinCount) + quorum
	}
	fmt.Fprintf(w, "Quorum:    %s\n", quorum)
	fmt.Fprintf(w, "Result:    %s: %s\n", verdict, e.Message)
	if c := e.Condition; c != nil {
		msg := ""
		if c.Message != "" {
			msg = ": " + c.Message
		}
		fmt.Fprintf(w, "Condition: PodGroupInitiallyScheduled=%s (%s)%s\n", c.Status, c.Reason, msg)
	}
	if len(e.Evictions) > 0 {
		victims := make([]string, len(e.Evictions))
		for i, v := range e.Evictions {
			victims[i] = v.Pod + " on " + v.Node
		}
		fmt.Fprintf(w, "Evicts:    %s\n", strings.Join(victims, ", "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tNODE\tSTATUS")
	for _, m := range e.PodMembers {
		node, status := m.Node, m.Message
		if node == "" {
			node = "-"
		}
		if status == "" {
			status = "placed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Pod, node, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writePodGroupWhy(w, e)
	if len(e.Placements) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLACEMENT\tNODES\tRESULT\tSCORE")
	for _, p := range e.Placements {
		result := "feasible"
		if p.Chosen {
			result = "feasible, chosen"
		} else if !p.Feasible {
			result = p.Message
		}
		score := "-"
		if p.Score != nil {
			score = fmt.Sprint(*p.Score)
		}
		name := p.Name
		if name == "" {
			name = "(unnamed)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", name, p.Nodes, result, score)
		if len(p.Shortfall) > 0 {
			fmt.Fprintf(tw, "\t\tshort of at least %s\n", ShortfallText(p.Shortfall))
		}
	}
	return tw.Flush()
}

// writePodGroupWhy writes, for a group that does not fit, the members
// left over grouped by reason, the nodes' shortfall and the template
// nodes that would make it fit.
func writePodGroupWhy(w io.Writer, e *PodGroupExplanation) {
	if e.Fits {
		return
	}
	if len(e.Reasons) > 1 || (len(e.Reasons) == 1 && len(e.PodMembers) > 1) {
		fmt.Fprintln(w, "\nLeft over, by reason:")
		for _, r := range e.Reasons {
			fmt.Fprintf(w, "  %d member(s): %s\n", len(r.Members), r.Message)
		}
	}
	if len(e.Shortfall) > 0 {
		fmt.Fprintf(w, "\nAll nodes together are short of at least %s\n", ShortfallText(e.Shortfall))
	}
	if n := e.NodesNeeded; n != nil {
		if n.Found {
			fmt.Fprintf(w, "\nWould fit with %d more node(s) of template %s\n", n.Nodes, n.Template)
		} else {
			fmt.Fprintf(w, "\nMore nodes of template %s: %s\n", n.Template, n.Message)
		}
	}
}
