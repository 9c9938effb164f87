// Package drain simulates `kubectl drain` on cluster state: the nodes are
// cordoned (or deleted), their pods go through kubectl drain's rules
// (DaemonSet and mirror pods stay, pods without a controller are refused
// unless forced, emptyDir data is flagged) and the eviction subresource's
// PodDisruptionBudget check, and the pods their controllers recreate are
// placed by the real scheduling loop in kube's queue order (priority,
// creationTimestamp, name), with the configured profile. Nothing is
// written anywhere.
package drain

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrUnknownNode is returned for a node that is not in the cluster.
var ErrUnknownNode = errors.New("no such node")

// Options tune a drain.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration.
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (in-tree plus extra).
	Registry schedcore.Registry
	// Features are the feature gates (zero value: defaults).
	Features schedcore.Features
	// Delete deletes the nodes instead of cordoning them.
	Delete bool
	// Force evicts pods that declare no controller (they are lost).
	Force bool
	// NoPreemption turns preemption off for the re-placed pods.
	NoPreemption bool
	// Source is recorded in the report ("snapshot" when empty).
	Source string
}

// Run drains the nodes (in the order given) in a copy of the cluster and
// reports what happens to every pod. The cluster is not modified.
func Run(ctx context.Context, cl *snapshot.Cluster, nodes []string, o Options) (*report.Drain, error) {
	byName := map[string]*v1.Node{}
	for _, n := range cl.Nodes {
		byName[n.Name] = n
	}
	drained := map[string]bool{}
	for _, n := range nodes {
		if byName[n] == nil {
			return nil, fmt.Errorf("node %q is not in the cluster: %w", n, ErrUnknownNode)
		}
		drained[n] = true
	}
	rep := &report.Drain{APIVersion: report.CapacityAPIVersion, Kind: "Drain", Source: o.Source, Action: "cordon",
		Nodes: []report.DrainNode{}, Moves: []report.Move{}, Refused: []report.Refused{}, Lost: []report.PodNote{},
		Stay: []report.PodNote{}, Preempted: []report.Eviction{}}
	if rep.Source == "" {
		rep.Source = "snapshot"
	}
	if o.Delete {
		rep.Action = "delete"
	}

	podsOn := map[string][]*v1.Pod{}
	for _, p := range cl.Pods {
		if drained[p.Spec.NodeName] && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			podsOn[p.Spec.NodeName] = append(podsOn[p.Spec.NodeName], p)
		}
	}
	b := newBudgets(cl.PDBs)
	gone := map[*v1.Pod]bool{}
	var replacements []*v1.Pod
	from := map[string]*v1.Pod{} // replacement name -> evicted pod
	for _, node := range nodes {
		pods := podsOn[node]
		sort.Slice(pods, func(i, j int) bool { return schedcore.PodName(pods[i]) < schedcore.PodName(pods[j]) })
		dn := report.DrainNode{Node: node, Drained: true, Pods: len(pods)}
		var unmanaged []string
		for _, p := range pods {
			if classify(p, o.Force) == refuseUnmanaged {
				unmanaged = append(unmanaged, schedcore.PodName(p))
			}
		}
		if len(unmanaged) > 0 {
			// kubectl drain evicts nothing on a node with an error.
			dn.Drained = false
			dn.Refusal = fmt.Sprintf("cannot delete %s: %s", unmanagedFatal, strings.Join(unmanaged, ", "))
		}
		for _, p := range pods {
			name := schedcore.PodName(p)
			v := classify(p, o.Force)
			switch {
			case v == keepDaemonSet || v == keepMirror:
				why := "DaemonSet pod: stays"
				if v == keepMirror {
					why = "mirror pod: the kubelet runs it"
				}
				if o.Delete {
					why += " (deleted with the node)"
				}
				rep.Stay = append(rep.Stay, report.PodNote{Pod: name, Node: node, Reason: why})
				continue
			case !dn.Drained:
				why := "the node is not drained: kubectl drain refuses it"
				if v == refuseUnmanaged {
					why = "declares no controller: kubectl drain refuses the node (--force deletes the pod)"
				}
				rep.Refused = append(rep.Refused, report.Refused{Pod: name, Node: node, Message: dn.Refusal, Cause: why})
				continue
			}
			if r := b.evict(p); r != nil {
				rep.Refused = append(rep.Refused, report.Refused{Pod: name, Node: node, Code: r.Code, Message: r.Message, Cause: r.Cause, Budget: r.Budget})
				continue
			}
			gone[p] = true
			rep.Summary.Evicted++
			if !recreated(p) {
				rep.Lost = append(rep.Lost, report.PodNote{Pod: name, Node: node, Reason: unmanagedWarning + ": nothing recreates it", LocalStorage: hasLocalStorage(p)})
				continue
			}
			r := replacement(p)
			replacements = append(replacements, r)
			from[schedcore.PodName(r)] = p
		}
		rep.Nodes = append(rep.Nodes, dn)
	}

	var goneList []*v1.Pod
	for _, p := range cl.Pods {
		if gone[p] {
			goneList = append(goneList, p)
		}
	}
	out, err := place(ctx, cl, nodes, goneList, replacements, o)
	if err != nil {
		return nil, err
	}
	nominated := map[string]string{}
	for _, n := range out.Nominations {
		nominated[n.Pod] = n.Node
	}
	for _, pl := range out.Placements {
		p := from[pl.Pod]
		if p == nil {
			continue
		}
		rep.Moves = append(rep.Moves, move(p, pl.Node, "Scheduled", nominated[pl.Pod]))
	}
	for _, u := range out.Unschedulable {
		if p := from[u.Pod]; p != nil {
			rep.Moves = append(rep.Moves, move(p, "", u.Message, nominated[u.Pod]))
			delete(from, u.Pod)
		}
	}
	for _, pl := range out.Placements {
		delete(from, pl.Pod)
	}
	for _, r := range replacements {
		// A pod of another scheduler: not ours to place.
		if p := from[schedcore.PodName(r)]; p != nil {
			rep.Moves = append(rep.Moves, move(p, "", fmt.Sprintf("not placed here: its schedulerName %q is not a profile of the configuration", r.Spec.SchedulerName), ""))
		}
	}
	rep.Preempted = append(rep.Preempted, out.Evictions...)
	rep.Utilisation = out.Nodes
	rep.Gangs = gangs(cl, rep, out, o.Features.GenericWorkload)

	s := &rep.Summary
	for _, m := range rep.Moves {
		if m.To != "" {
			s.Placed++
		} else {
			s.Pending++
		}
	}
	s.Lost, s.Refused, s.Stay, s.Preempted = len(rep.Lost), len(rep.Refused), len(rep.Stay), len(rep.Preempted)
	for _, g := range rep.Gangs {
		if g.Broken {
			s.BrokenGangs++
		}
	}
	rep.Complete = s.Pending == 0 && s.Lost == 0 && s.Refused == 0 && s.Preempted == 0
	return rep, nil
}

func move(p *v1.Pod, to, reason, nominated string) report.Move {
	m := report.Move{Pod: schedcore.PodName(p), From: p.Spec.NodeName, To: to, Reason: reason, LocalStorage: hasLocalStorage(p), Nominated: nominated}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		m.Controller = ref.Kind + "/" + ref.Name
	}
	return m
}

// replacement is the pod an evicted pod's controller creates: the same
// pod, pending, with a new UID. It keeps the name (a StatefulSet's does;
// a ReplicaSet's gets a new suffix, which changes no decision) and the
// creationTimestamp, which kube's queue order reads after the priority.
func replacement(p *v1.Pod) *v1.Pod {
	r := &v1.Pod{ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
	r.UID = types.UID("drain-" + p.Namespace + "-" + p.Name)
	r.ResourceVersion = ""
	r.DeletionTimestamp = nil
	r.Spec.NodeName = ""
	r.Status = v1.PodStatus{Phase: v1.PodPending}
	return r
}
