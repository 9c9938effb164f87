package main

import (
	"bytes"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/gang"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// gangWorkloads are the workload-aware scheduling workloads: the bench
// shape of internal/gen/gang (5000 GPU nodes, a few thousand pods in
// PodGroups of every policy, seed 1), scheduled with kube's
// GenericWorkload gate on (the pod-group cycle), on both sides.
func gangWorkloads() []workload {
	const gates = "GenericWorkload=true"
	marshal := func() ([]byte, error) {
		c, err := gang.GenerateBench(gang.BenchParams{Nodes: 5000, Seed: 1})
		if err != nil {
			return nil, err
		}
		return v1list.Marshal("json", c.Objects()...)
	}
	return []workload{{
		name:    "Gang/5000Nodes",
		gates:   gates,
		marshal: marshal,
		// Loaded from the dump, as a snapshot file is (defaults applied).
		load: func() (*snapshot.Cluster, error) {
			data, err := marshal()
			if err != nil {
				return nil, err
			}
			return snapshot.LoadPaths([]string{"-"}, bytes.NewReader(data))
		},
	}}
}
