package helper

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Resource names as client-go's listers put them in NotFound errors
// (GroupResource.String() of the singular resource).
const (
	ResourcePVC          = "persistentvolumeclaim"
	ResourcePV           = "persistentvolume"
	ResourceStorageClass = "storageclass.storage.k8s.io"
)

// NotFoundMessage is the message of apimachinery's NotFound error as a
// lister returns it: `persistentvolumeclaim "data" not found`. The volume
// plugins use it word for word as kube's do.
func NotFoundMessage(resource, name string) string {
	return fmt.Sprintf("%s %q not found", resource, name)
}

// MatchTopologySelectorTerms is kube's v1helper.MatchTopologySelectorTerms:
// the terms are ORed; an empty list matches everything; an empty term
// matches nothing; each term's expressions are ANDed "key In values".
func MatchTopologySelectorTerms(terms []v1.TopologySelectorTerm, lbls labels.Set) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if len(t.MatchLabelExpressions) == 0 {
			continue
		}
		sel := labels.NewSelector()
		ok := true
		for _, e := range t.MatchLabelExpressions {
			r, err := labels.NewRequirement(e.Key, selection.In, e.Values)
			if err != nil {
				ok = false
				break
			}
			sel = sel.Add(*r)
		}
		if ok && sel.Matches(lbls) {
			return true
		}
	}
	return false
}

// LabelZonesToSet splits a zone label value on "__", as cloud-provider's
// volume helpers do; an empty element is an error.
func LabelZonesToSet(value string) (map[string]struct{}, error) {
	out := map[string]struct{}{}
	for _, z := range strings.Split(value, "__") {
		z = strings.TrimSpace(z)
		if z == "" {
			return nil, fmt.Errorf("%q separated list (%q) must not contain an empty string", "__", value)
		}
		out[z] = struct{}{}
	}
	return out, nil
}

// HasAccessMode reports whether modes holds mode.
func HasAccessMode(modes []v1.PersistentVolumeAccessMode, mode v1.PersistentVolumeAccessMode) bool {
	for _, m := range modes {
		if m == mode {
			return true
		}
	}
	return false
}
