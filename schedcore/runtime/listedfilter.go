package runtime

import "github.com/kubectl-sched/kubectl-sched/schedcore"

// listedFilters returns filters as ListedFilters (aligned with them, nil
// for a plugin that is not one), or nil when none is one: found once per
// cycle, not by a type assertion per node.
func listedFilters(filters []schedcore.FilterPlugin) []schedcore.ListedFilter {
	var out []schedcore.ListedFilter
	for j, pl := range filters {
		if lf, ok := pl.(schedcore.ListedFilter); ok {
			if out == nil {
				out = make([]schedcore.ListedFilter, len(filters))
			}
			out[j] = lf
		}
	}
	return out
}
