package replay

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// FromOpenb reads the Alibaba openb trace's CSVs (internal/gen/openb's
// mapping, with departures): pods arrive at creation_time and leave at
// deletion_time. Errors name the file and line.
func FromOpenb(nodesCSV, podsCSV string, o openb.Options) (*Trace, error) {
	o.Departures = true
	nodes, pods, err := openb.LoadFiles(nodesCSV, podsCSV, o)
	if err != nil {
		return nil, err
	}
	cl := &snapshot.Cluster{Nodes: nodes, Pods: pods, Namespaces: []*v1.Namespace{openb.NamespaceObject(o)}}
	return FromCluster(cl)
}
