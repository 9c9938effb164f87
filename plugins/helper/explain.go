package helper

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The words of the plugins' explanations (schedcore.FilterExplainer) that
// more than one plugin uses: what a node lacks of a node selector term.

// NodeSelectorGaps names the nodeSelector labels the node does not have
// as wanted, in key order.
func NodeSelectorGaps(selector map[string]string, node *v1.Node) []string {
	keys := make([]string, 0, len(selector))
	for k := range selector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		want := selector[k]
		if have, ok := node.Labels[k]; !ok {
			out = append(out, fmt.Sprintf("node selector: label %s=%s wanted, node has no %s label", k, want, k))
		} else if have != want {
			out = append(out, fmt.Sprintf("node selector: label %s=%s wanted, node has %s=%s", k, want, k, have))
		}
	}
	return out
}

// NodeSelectorTermGap describes the first requirement of a node selector
// term the node fails, "" when the term matches.
func NodeSelectorTermGap(t *v1.NodeSelectorTerm, node *v1.Node) string {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return "the term is empty and matches no node"
	}
	for _, r := range t.MatchExpressions {
		if gap := requirementGap(r, node.Labels); gap != "" {
			return gap
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != metav1.ObjectNameField {
			return fmt.Sprintf("field %s is not supported (only %s)", r.Key, metav1.ObjectNameField)
		}
		if len(r.Values) != 1 {
			// A field selector takes exactly one value; kube-scheduler
			// treats anything else as matching no node.
			return fmt.Sprintf("matchFields %s %s must have exactly one value, has %d, and matches no node", r.Key, r.Operator, len(r.Values))
		}
		in := r.Values[0] == node.Name
		switch {
		case r.Operator == v1.NodeSelectorOpIn && !in:
			return fmt.Sprintf("node name %s wanted, node is %s", r.Values[0], node.Name)
		case r.Operator == v1.NodeSelectorOpNotIn && in:
			return fmt.Sprintf("any node but %s wanted", r.Values[0])
		}
	}
	return ""
}

func requirementGap(r v1.NodeSelectorRequirement, nodeLabels map[string]string) string {
	have, ok := nodeLabels[r.Key]
	has := fmt.Sprintf("node has %s=%s", r.Key, have)
	if !ok {
		has = fmt.Sprintf("node has no %s label", r.Key)
	}
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		if ok && contains(r.Values, have) {
			return ""
		}
		if len(r.Values) == 1 {
			return fmt.Sprintf("label %s=%s wanted, %s", r.Key, r.Values[0], has)
		}
		return fmt.Sprintf("label %s in (%s) wanted, %s", r.Key, strings.Join(r.Values, ", "), has)
	case v1.NodeSelectorOpNotIn:
		if !ok || !contains(r.Values, have) {
			return ""
		}
		return fmt.Sprintf("label %s not in (%s) wanted, %s", r.Key, strings.Join(r.Values, ", "), has)
	case v1.NodeSelectorOpExists:
		if ok {
			return ""
		}
		return fmt.Sprintf("label %s wanted, %s", r.Key, has)
	case v1.NodeSelectorOpDoesNotExist:
		if !ok {
			return ""
		}
		return fmt.Sprintf("label %s must be absent, %s", r.Key, has)
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		op := ">"
		if r.Operator == v1.NodeSelectorOpLt {
			op = "<"
		}
		if len(r.Values) != 1 {
			return fmt.Sprintf("label %s %s: needs exactly one value", r.Key, op)
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return fmt.Sprintf("label %s %s %s: not an integer", r.Key, op, r.Values[0])
		}
		if ok {
			if v, err := strconv.ParseInt(have, 10, 64); err == nil && (op == ">" && v > want || op == "<" && v < want) {
				return ""
			}
		}
		return fmt.Sprintf("label %s %s %d wanted, %s", r.Key, op, want, has)
	}
	return fmt.Sprintf("unknown operator %q on label %s", r.Operator, r.Key)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// DomainWord is a short name for a topology key in explanations: "zone",
// "region", "hostname", or the key itself.
func DomainWord(key string) string {
	switch key {
	case v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone:
		return "zone"
	case v1.LabelTopologyRegion, v1.LabelFailureDomainBetaRegion:
		return "region"
	case v1.LabelHostname:
		return "hostname"
	}
	return key
}

// InDomain says where a domain is: "in zone zone-b".
func InDomain(key, value string) string {
	return fmt.Sprintf("in %s %s", DomainWord(key), value)
}
