package helper

import (
	"encoding/binary"
	"sort"

	v1 "k8s.io/api/core/v1"
)

// RequiredAffinityKey identifies what RequiredNodeAffinity.Match reads of a
// pod, its nodeSelector and required node affinity, as a memo key: pods
// with equal keys match the same nodes.
func RequiredAffinityKey(pod *v1.Pod) string {
	var b []byte
	keys := make([]string, 0, len(pod.Spec.NodeSelector))
	for k := range pod.Spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = appendString(b, "s")
	for _, k := range keys {
		b = appendString(b, k)
		b = appendString(b, pod.Spec.NodeSelector[k])
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		b = appendString(b, "r")
		if pb, err := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.Marshal(); err == nil {
			b = appendString(b, string(pb))
		}
	}
	return string(b)
}

// PreferredAffinityKey identifies a pod's preferred node affinity terms as
// a memo key.
func PreferredAffinityKey(pod *v1.Pod) string {
	var b []byte
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		for i := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			if pb, err := a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i].Marshal(); err == nil {
				b = appendString(b, string(pb))
			}
		}
	}
	return string(b)
}

// TolerationsKey identifies a pod's tolerations, in order, as a memo key.
func TolerationsKey(pod *v1.Pod) string {
	var b []byte
	for i := range pod.Spec.Tolerations {
		if pb, err := pod.Spec.Tolerations[i].Marshal(); err == nil {
			b = appendString(b, string(pb))
		}
	}
	return string(b)
}

// appendString appends s with its length, so that concatenations are
// unambiguous.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
