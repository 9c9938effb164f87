package gang

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
)

func TestGenerateIsDeterministic(t *testing.T) {
	for _, p := range []Params{{Nodes: 48, Seed: 1}, {Nodes: 64, Seed: 2, Topology: true}} {
		a, err := Generate(p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Generate(p)
		ya, err := v1list.Marshal("yaml", a.Objects()...)
		if err != nil {
			t.Fatal(err)
		}
		yb, _ := v1list.Marshal("yaml", b.Objects()...)
		if string(ya) != string(yb) {
			t.Errorf("%+v: two generations differ", p)
		}
		p.Seed++
		c, _ := Generate(p)
		yc, _ := v1list.Marshal("yaml", c.Objects()...)
		if string(ya) == string(yc) {
			t.Errorf("%+v: another seed gives the same cluster", p)
		}
	}
}

// TestGenerateShapes checks what each shape promises: GPUs never over
// committed; mixed clusters have running victim gangs of both disruption
// modes (with preemption), high-priority gangs and a gang larger than the
// free and preemptible GPUs; topology clusters give every gang a rack
// constraint and, in queue order, exactly one rack with room for it.
func TestGenerateShapes(t *testing.T) {
	tests := []struct {
		name string
		p    Params
	}{
		{"a small mixed cluster with preemption", Params{Nodes: 48, Seed: 1}},
		{"a large mixed cluster without preemption", Params{Nodes: 500, Seed: 4}},
		{"a small topology cluster", Params{Nodes: 24, Seed: 1, Topology: true}},
		{"a large topology cluster", Params{Nodes: 200, Seed: 3, Topology: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Generate(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			used := map[string]int64{}
			for _, p := range c.Running {
				q := p.Spec.Containers[0].Resources.Requests[GPU]
				used[p.Spec.NodeName] += q.Value()
			}
			free := map[string]int{}
			rackFree := map[string]int{}
			for _, n := range c.Nodes {
				if used[n.Name] > gpusPerNode {
					t.Errorf("%s: %d GPUs used of %d", n.Name, used[n.Name], gpusPerNode)
				}
				free[n.Name] = gpusPerNode - int(used[n.Name])
				if free[n.Name] == gpusPerNode {
					rackFree[n.Labels[RackLabel]]++
				}
			}
			modes := map[string]bool{}
			for _, pg := range c.PodGroups {
				if tt.p.Topology != (pg.Spec.SchedulingConstraints != nil) {
					t.Errorf("%s: constraints %v in a topology=%v cluster", pg.Name, pg.Spec.SchedulingConstraints, tt.p.Topology)
				}
				if *pg.Spec.Priority == LowPriority {
					modes[disruption(pg.Spec.DisruptionMode.All != nil)] = true
				}
			}
			if tt.p.Topology {
				// Gangs in creation order: the first fits no rack; each
				// other fits exactly one rack when its turn comes.
				for i, pg := range c.PodGroups {
					need := int(pg.Spec.SchedulingPolicy.Gang.MinCount)
					fits := []string{}
					for r, f := range rackFree {
						if f >= need {
							fits = append(fits, r)
						}
					}
					switch {
					case i == 0 && pg.Name == "spread":
						if len(fits) != 0 {
							t.Errorf("spread (%d) fits racks %v", need, fits)
						}
					case len(fits) != 1:
						t.Errorf("%s (%d nodes): fits racks %v, want exactly one", pg.Name, need, fits)
					default:
						rackFree[fits[0]] -= need
					}
				}
				return
			}
			want := map[string]bool{}
			if tt.p.Nodes <= 100 {
				want = map[string]bool{"All": true, "Single": true}
			}
			if d := cmp.Diff(want, modes); d != "" {
				t.Errorf("victim disruption modes (-want +got):\n%s", d)
			}
		})
	}
}

func disruption(all bool) string {
	if all {
		return "All"
	}
	return "Single"
}

func TestGenerateRefusesSizesOutOfRange(t *testing.T) {
	for _, n := range []int{0, 15, 1001} {
		if _, err := Generate(Params{Nodes: n}); !errors.Is(err, ErrParams) {
			t.Errorf("nodes %d: %v, want ErrParams", n, err)
		}
	}
}
