package topologyaware

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.TopologyPlacementGenerator

// The plugin's errors, kube's words.
const (
	// ErrReasonScheduledDomain wraps why the domain of the scheduled
	// members cannot be told.
	ErrReasonScheduledDomain = "cannot determine domain for already scheduled pods: %w"
	// ErrReasonNodeOfPod: a scheduled member's node is not in the snapshot.
	ErrReasonNodeOfPod = "getting node for pod %v: %w"
	// ErrReasonNoDomain: a scheduled member's node lacks the key.
	ErrReasonNoDomain = "no topology domain found for pod %v"
	// ErrReasonManyDomains: scheduled members are in two domains.
	ErrReasonManyDomains = "more than 1 domain found for pod group: %v, %v"
)

// TopologyPlacement generates a pod group's placements from its topology
// constraint.
type TopologyPlacement struct {
	h *schedcore.Handle
}

var _ schedcore.PlacementGeneratePlugin = (*TopologyPlacement)(nil)

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &TopologyPlacement{h: h}, nil
}

// Name returns Name.
func (pl *TopologyPlacement) Name() string { return Name }

// GeneratePlacements returns one placement per domain of the group's
// topology key among parent's nodes, ordered by domain name, restricted
// to the scheduled members' domain when there are any; the parent itself
// without a constraint.
func (pl *TopologyPlacement) GeneratePlacements(_ context.Context, _ *schedcore.CycleState, podGroup schedcore.PodGroupInfo, parent *schedcore.Placement) (*schedcore.GeneratePlacementsResult, *schedcore.Status) {
	key, ok := topologyKey(podGroup)
	if !ok {
		return &schedcore.GeneratePlacementsResult{Placements: []*schedcore.Placement{parent}}, nil
	}
	var required *string
	scheduled, err := pl.scheduledPods(podGroup)
	if err != nil {
		return nil, schedcore.AsStatus(err)
	}
	if len(scheduled) > 0 {
		domain, err := pl.scheduledDomain(key, scheduled)
		if err != nil {
			return nil, schedcore.AsStatus(fmt.Errorf(ErrReasonScheduledDomain, err))
		}
		required = &domain
	}
	byDomain := map[string][]*schedcore.NodeInfo{}
	for _, n := range parent.Nodes {
		if d, ok := n.Node().Labels[key]; ok && (required == nil || *required == d) {
			byDomain[d] = append(byDomain[d], n)
		}
	}
	domains := make([]string, 0, len(byDomain))
	for d := range byDomain {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	placements := make([]*schedcore.Placement, 0, len(domains))
	for _, d := range domains {
		placements = append(placements, &schedcore.Placement{Name: d, Nodes: byDomain[d]})
	}
	return &schedcore.GeneratePlacementsResult{Placements: placements}, nil
}

// scheduledDomain is the one domain of the scheduled members' nodes.
func (pl *TopologyPlacement) scheduledDomain(key string, pods []*v1.Pod) (string, error) {
	domain := ""
	for _, p := range pods {
		n, err := pl.h.Snapshot().Get(p.Spec.NodeName)
		if err != nil {
			return "", fmt.Errorf(ErrReasonNodeOfPod, kobj(p), err)
		}
		d, ok := n.Node().Labels[key]
		if !ok {
			return "", fmt.Errorf(ErrReasonNoDomain, kobj(p))
		}
		if domain != "" && domain != d {
			return "", fmt.Errorf(ErrReasonManyDomains, domain, d)
		}
		domain = d
	}
	return domain, nil
}

// kobj renders a pod as klog.KObj does: "NS/NAME".
func kobj(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// topologyKey is the group's topology[0].key (the API allows one).
func topologyKey(podGroup schedcore.PodGroupInfo) (string, bool) {
	if pg := podGroup.PodGroup(); pg != nil {
		if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			return c.Topology[0].Key, true
		}
	}
	return "", false
}

// scheduledPods are the group's assumed and bound members, from the
// cycle's snapshot.
func (pl *TopologyPlacement) scheduledPods(podGroup schedcore.PodGroupInfo) ([]*v1.Pod, error) {
	k := podGroup.Key()
	st, err := pl.h.Snapshot().PodGroupStates().Get(k.Namespace, k.Name)
	if err != nil {
		return nil, err
	}
	return st.ScheduledPods(), nil
}
