package schedcore

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// ListedFilter is a FilterPlugin that can filter a node of the cycle's
// snapshot's list knowing its list position (0-based), reading what it
// needs by position (DomainCounts.NodeDomainsListed) rather than through
// the NodeInfo: the filter loop then does not reach the node's NodeInfo for
// it. FilterListed must answer as Filter does, for any pos: pos is a hint
// the plugin checks (the node snap lists at pos must be ni), as a node may
// be filtered at a position that is not its own (a copy with nominated
// pods added, a node of another list).
type ListedFilter interface {
	FilterPlugin
	FilterListed(ctx context.Context, state *CycleState, pod *v1.Pod, ni *NodeInfo, pos int) *Status
}
