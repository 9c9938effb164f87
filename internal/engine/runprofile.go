package engine

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// RunSchedulerName is the profile `kubectl sched run` schedules for without
// --config: pods opt in with spec.schedulerName: kubectl-sched, so run
// works beside the cluster's kube-scheduler without fighting it.
const RunSchedulerName = "kubectl-sched"

// AddRunProfile adds to the default configuration (the one without
// --config) a second profile, RunSchedulerName, the same as
// default-scheduler: the offline verbs then know both the default
// scheduler's pods and the ones meant for `run`, so a dry-run of a dump
// predicts what run does with it. A configuration that already has a
// profile of that name is left as it is.
func AddRunProfile(cfg *configv1.KubeSchedulerConfiguration) {
	for _, p := range cfg.Profiles {
		if p.SchedulerName != nil && *p.SchedulerName == RunSchedulerName {
			return
		}
	}
	p := cfg.Profiles[0].DeepCopy()
	name := RunSchedulerName
	p.SchedulerName = &name
	cfg.Profiles = append(cfg.Profiles, *p)
}

// Pending reports whether a pod waits to be scheduled: not bound, not
// finished, not being deleted.
func Pending(p *v1.Pod) bool {
	return p.Spec.NodeName == "" && p.DeletionTimestamp == nil &&
		p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed
}

// UnservedWarnings returns one line per schedulerName that pending pods of
// the cluster ask for and no profile of cfg serves, with how many pods
// that leaves unscheduled, sorted by name:
// `warning: 9 pending pods for scheduler "x" skipped: no profile of that name (profiles: default-scheduler, kubectl-sched)`.
func UnservedWarnings(cl *snapshot.Cluster, cfg *configv1.KubeSchedulerConfiguration) []string {
	served := map[string]bool{}
	var names string
	for i, p := range cfg.Profiles {
		n := v1.DefaultSchedulerName
		if p.SchedulerName != nil && *p.SchedulerName != "" {
			n = *p.SchedulerName
		}
		served[n] = true
		if i > 0 {
			names += ", "
		}
		names += n
	}
	skipped := map[string]int{}
	for _, p := range cl.Pods {
		if Pending(p) && !served[p.Spec.SchedulerName] {
			skipped[p.Spec.SchedulerName]++
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(skipped)) {
		n := skipped[name]
		pods := "pods"
		if n == 1 {
			pods = "pod"
		}
		out = append(out, fmt.Sprintf("warning: %d pending %s for scheduler %q skipped: no profile of that name (profiles: %s)", n, pods, name, names))
	}
	return out
}
