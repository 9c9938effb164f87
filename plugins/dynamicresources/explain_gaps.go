package dynamicresources

// The gap lines of a rejected node: per request, per constraint and between
// requests competing for the same devices.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// gap renders a request's outcome: what it needs, what the node has, one
// detail per device not free.
func (x *nodeExplainer) gap(o *requestOutcome, choice string) schedcore.Gap {
	if x.short {
		return schedcore.Gap{}
	}
	r := o.req
	var need string
	switch r.mode {
	case resourceapi.DeviceAllocationModeAll:
		need = "all devices of class " + r.class
	default:
		need = fmt.Sprintf("%d free %s of class %s", o.wanted, plural(o.wanted, "device", "devices"), r.class)
	}
	if r.adminAccess {
		need += " (admin access)"
	}
	var exprs []string
	for _, s := range r.selectors {
		if s.CEL != nil {
			exprs = append(exprs, s.CEL.Expression)
		}
	}
	if len(exprs) > 0 {
		need += " matching " + strings.Join(exprs, " and ")
	}
	if r.mode == resourceapi.DeviceAllocationModeAll {
		need += ", every one free"
	}
	counts := map[string]int{}
	var who []string
	for _, v := range o.verdicts {
		counts[v.kind]++
		for _, w := range v.who {
			if !slices.Contains(who, w) {
				who = append(who, w)
			}
		}
	}
	sort.Strings(who)
	has := fmt.Sprintf("%d free", len(o.free))
	if n := counts["allocated"]; n > 0 {
		has += fmt.Sprintf(", %d allocated to %s", n, strings.Join(who, ", "))
	}
	for _, k := range []struct{ kind, word string }{{"tainted", "tainted"}, {"counters", "out of counters"}, {"capacity", "without the capacity"}} {
		if n := counts[k.kind]; n > 0 {
			has += fmt.Sprintf(", %d %s", n, k.word)
		}
	}
	if n := counts["nomatch"]; n > 0 {
		has += fmt.Sprintf(", %d not matching", n)
	}
	if len(x.devices) == 0 {
		has = "no device"
	}
	g := schedcore.Gap{Text: fmt.Sprintf("request %s%s of claim %s: needs %s; %s has %s", r.name, choice, r.claim.Namespace+"/"+r.claim.Name, need, x.node.Name, has)}
	for i, v := range o.verdicts {
		line := x.devices[i].String() + ": "
		switch v.kind {
		case "":
			line += "free"
		case "allocated":
			line += "allocated to " + strings.Join(v.who, ", ")
			if len(v.who) == 0 {
				line = x.devices[i].String() + ": allocated (in flight)"
			}
		default:
			line += v.why
		}
		g.Details = append(g.Details, line)
	}
	return g
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// taintString renders a device taint as kubectl renders node taints.
func taintString(t resourceapi.DeviceTaint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// constraintGaps checks the claim's matchAttribute constraints against
// the free devices of the requests they bind: a constraint fails when no
// single value of the attribute has enough free devices for each request.
// missing is what the best value lacks, summed over the failed ones.
func (x *nodeExplainer) constraintGaps(claim *resourceapi.ResourceClaim, byName map[string]*requestOutcome) (out []schedcore.Gap, missing int64) {
	for _, c := range claim.Spec.Devices.Constraints {
		if c.MatchAttribute == nil {
			continue
		}
		attr := *c.MatchAttribute
		names := c.Requests
		if len(names) == 0 {
			for _, r := range claim.Spec.Devices.Requests {
				names = append(names, r.Name)
			}
		}
		// per value: devices free for each request
		perValue := map[string]map[string]int64{}
		var reqs []*requestOutcome
		for _, n := range names {
			base, _, _ := strings.Cut(n, "/")
			o := byName[base]
			if o == nil {
				continue
			}
			reqs = append(reqs, o)
			for _, d := range o.free {
				v, ok := attributeValue(d, attr)
				if !ok {
					continue
				}
				if perValue[v] == nil {
					perValue[v] = map[string]int64{}
				}
				perValue[v][o.req.name]++
			}
		}
		if len(reqs) == 0 {
			continue
		}
		best := int64(-1)
		for _, counts := range perValue {
			short := int64(0)
			for _, o := range reqs {
				short += max(o.wanted-counts[o.req.name], 0)
			}
			if best < 0 || short < best {
				best = short
			}
		}
		if best == 0 {
			continue
		}
		if best < 0 {
			for _, o := range reqs {
				best += o.wanted
			}
			best++
		}
		missing += best
		g := schedcore.Gap{Text: fmt.Sprintf("constraint of claim %s: the devices of requests %s must have the same %s; no value of it has enough free devices on %s", claim.Namespace+"/"+claim.Name, strings.Join(names, ", "), attr, x.node.Name)}
		values := make([]string, 0, len(perValue))
		for v := range perValue {
			values = append(values, v)
		}
		sort.Strings(values)
		for _, v := range values {
			var parts []string
			for _, o := range reqs {
				parts = append(parts, fmt.Sprintf("%d of %d for %s", perValue[v][o.req.name], o.wanted, o.req.name))
			}
			g.Details = append(g.Details, fmt.Sprintf("%s=%s: %s", attr, v, strings.Join(parts, ", ")))
		}
		if len(values) == 0 {
			g.Details = append(g.Details, "no free device has the attribute")
		}
		out = append(out, g)
	}
	return out, missing
}

// attributeValue looks an attribute up as the allocator does: by its
// fully qualified name, or by its bare name when the domain is the
// device's driver.
func attributeValue(d *nodeDevice, name resourceapi.FullyQualifiedName) (string, bool) {
	a, ok := d.dev.Attributes[resourceapi.QualifiedName(name)]
	if !ok {
		domain, id, found := strings.Cut(string(name), "/")
		if !found || domain != d.slice.Spec.Driver {
			return "", false
		}
		if a, ok = d.dev.Attributes[resourceapi.QualifiedName(id)]; !ok {
			return "", false
		}
	}
	switch {
	case a.IntValue != nil:
		return fmt.Sprint(*a.IntValue), true
	case a.BoolValue != nil:
		return fmt.Sprint(*a.BoolValue), true
	case a.StringValue != nil:
		return *a.StringValue, true
	case a.VersionValue != nil:
		return *a.VersionValue, true
	}
	return fmt.Sprint(a), true
}

// competition finds requests that each have enough free devices alone but
// not together: the distinct free devices they draw on are fewer than
// they want in all.
func (x *nodeExplainer) competition(all []*requestOutcome) (schedcore.Gap, bool) {
	var wanted int64
	distinct := map[structured.DeviceID]bool{}
	var names []string
	for _, o := range all {
		if o.req.adminAccess || o.req.mode == resourceapi.DeviceAllocationModeAll {
			continue
		}
		wanted += o.wanted
		for _, d := range o.free {
			if ptr.Deref(d.dev.AllowMultipleAllocations, false) {
				// A device with consumable capacity may serve several
				// requests: counting devices says nothing.
				return schedcore.Gap{}, false
			}
			distinct[d.id] = true
		}
		names = append(names, fmt.Sprintf("%s of claim %s (%d)", o.req.name, o.req.claim.Namespace+"/"+o.req.claim.Name, o.wanted))
	}
	if len(names) < 2 || int64(len(distinct)) >= wanted {
		return schedcore.Gap{}, false
	}
	return schedcore.Gap{Text: fmt.Sprintf("requests %s need %d devices in all; %s has %d free that match them", strings.Join(names, ", "), wanted, x.node.Name, len(distinct))}, true
}
