package explain

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
)

// NewState builds the plugins' indexes as it loads (engine.Prepare); the
// explanations must be those of a state that leaves them to its first
// explanation: of pending pods, and of bound pods, whose explanation takes
// them off their node and so changes the nodes the indexes were built on.
func TestPreparedStateExplainsAsUnprepared(t *testing.T) {
	for _, name := range []string{"Mixed/500Nodes", "SchedulingPodAntiAffinity/500Nodes", "TopologySpreading/500Nodes", "PreferredTopologySpreading/500Nodes"} {
		t.Run(name, func(t *testing.T) {
			w, err := workload.Generate(name, workload.Params{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			var pods []*v1.Pod
			pending, bound := 0, 0
			for _, p := range w.Cluster().Pods {
				switch {
				case p.Spec.NodeName == "" && pending < 15:
					pending++
					pods = append(pods, p)
				case p.Spec.NodeName != "" && bound < 10:
					bound++
					pods = append(pods, p)
				}
			}
			ctx := context.Background()
			o := options(t)
			prepared, err := NewState(ctx, w.Cluster(), o)
			if err != nil {
				t.Fatal(err)
			}
			o.noPrepare = true
			unprepared, err := NewState(ctx, w.Cluster(), o)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				want, err := unprepared.Explain(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := prepared.Explain(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s/%s (-unprepared +prepared):\n%s", p.Namespace, p.Name, diff)
				}
			}
		})
	}
}
