package poolpreference

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/app"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func nodeInfo(pool string) *schedcore.NodeInfo {
	n := schedtest.MakeNode("n")
	if pool != "" {
		n.Label("pool", pool)
	}
	ni := schedcore.NewNodeInfo()
	ni.SetNode(n.Obj())
	return ni
}

func TestFilterAndScore(t *testing.T) {
	pl, err := New(context.Background(), &PoolPreferenceArgs{Prefer: []string{"memory", "general"}, Avoid: []string{"spot"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*PoolPreference)
	pod := schedtest.MakePod("p").Obj()
	tests := []struct {
		name      string
		pool      string
		wantCode  schedcore.Code
		wantScore int64
	}{
		{"the first preferred pool scores 100", "memory", schedcore.Success, 100},
		{"the second of two scores 50", "general", schedcore.Success, 50},
		{"another pool scores 0", "gpu", schedcore.Success, 0},
		{"a node without the label scores 0", "", schedcore.Success, 0},
		{"an avoided pool is rejected, unresolvably", "spot", schedcore.UnschedulableAndUnresolvable, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := p.Filter(context.Background(), nil, pod, nodeInfo(tt.pool))
			if st.Code() != tt.wantCode {
				t.Errorf("Filter code = %v, want %v", st.Code(), tt.wantCode)
			}
			if tt.wantCode != schedcore.Success {
				if d := cmp.Diff([]string{ErrReasonAvoidedPool}, st.Reasons()); d != "" {
					t.Errorf("reasons (-want +got):\n%s", d)
				}
				want := schedcore.NewFilterExplanation(1, "node is in pool "+tt.pool+", which the args avoid (label pool)")
				if d := cmp.Diff(want, p.ExplainFilter(context.Background(), nil, pod, nodeInfo(tt.pool), st)); d != "" {
					t.Errorf("ExplainFilter (-want +got):\n%s", d)
				}
				return
			}
			got, st := p.Score(context.Background(), nil, pod, nodeInfo(tt.pool))
			if !st.IsSuccess() || got != tt.wantScore {
				t.Errorf("Score = %d, %v; want %d", got, st, tt.wantScore)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    runtime.Object
		wantErr string
	}{
		{"nil args are the defaults", nil, ""},
		{"a pool both preferred and avoided", &PoolPreferenceArgs{Prefer: []string{"a"}, Avoid: []string{"b", "a"}}, `avoid[1]: Invalid value: "a": the pool is also in prefer`},
		{"a pool preferred twice", &PoolPreferenceArgs{Prefer: []string{"a", "a"}}, `prefer[1]: Duplicate value: "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), tt.args, nil)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("err = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestCustomBinary runs the command the example's main builds on the
// shipped cluster: the spot pool is avoided, the memory pool preferred.
func TestCustomBinary(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := app.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		app.WithPlugin(Name, New, NewArgs))
	cmd.SetArgs([]string{"dryrun", "-f", "../../cluster.yaml", "--config", "../sched-config.yaml", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	var rep struct {
		Placements []struct {
			Pod, Node string
		}
		Unschedulable []struct {
			Pod, Message string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	avoided := 0
	for _, u := range rep.Unschedulable {
		if strings.Contains(u.Message, "node(s) are in an avoided pool") {
			avoided++
		}
	}
	if avoided == 0 {
		t.Error("no unschedulable pod names the avoided pool")
	}
	for _, p := range rep.Placements {
		if strings.HasPrefix(p.Node, "spot-") {
			t.Errorf("%s was placed on %s, in the avoided spot pool", p.Pod, p.Node)
		}
		// cart has no placement rules of its own: PoolPreference moves
		// it from the general pool to the memory one.
		if strings.HasPrefix(p.Pod, "web/cart-") && !strings.HasPrefix(p.Node, "memory-") {
			t.Errorf("%s was placed on %s, not in the preferred memory pool", p.Pod, p.Node)
		}
	}
}
