package helper

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The parts of a pod that the plugins' per-node memos depend on, written
// into a schedcore.MemoKey: pods with equal keys get the same verdicts.

// RequiredAffinityKey writes what RequiredNodeAffinity.Match reads of a
// pod: its nodeSelector and required node affinity.
func RequiredAffinityKey(k *schedcore.MemoKey, pod *v1.Pod) *schedcore.MemoKey {
	k.Map(pod.Spec.NodeSelector)
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		if pb, err := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.Marshal(); err == nil {
			return k.Bytes(pb)
		}
	}
	return k.Bytes(nil)
}

// PreferredAffinityKey writes a pod's preferred node affinity terms.
func PreferredAffinityKey(k *schedcore.MemoKey, pod *v1.Pod) *schedcore.MemoKey {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		terms := a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		k.Int(int64(len(terms)))
		for i := range terms {
			if pb, err := terms[i].Marshal(); err == nil {
				k.Bytes(pb)
			}
		}
		return k
	}
	return k.Int(0)
}

// TolerationsKey writes a pod's tolerations, in order.
func TolerationsKey(k *schedcore.MemoKey, pod *v1.Pod) *schedcore.MemoKey {
	k.Int(int64(len(pod.Spec.Tolerations)))
	for i := range pod.Spec.Tolerations {
		if pb, err := pod.Spec.Tolerations[i].Marshal(); err == nil {
			k.Bytes(pb)
		}
	}
	return k
}
