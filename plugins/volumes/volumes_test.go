package volumes

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestPreFilter(t *testing.T) {
	tests := []struct {
		name     string
		newFn    func(context.Context, any) (schedcore.Plugin, error)
		withPVC  bool
		wantCode schedcore.Code
	}{
		{"volume binding skips a pod without claims", func(ctx context.Context, _ any) (schedcore.Plugin, error) { return NewVolumeBinding(ctx, nil, nil) }, false, schedcore.Skip},
		{"volume binding rejects a pod with a claim", func(ctx context.Context, _ any) (schedcore.Plugin, error) { return NewVolumeBinding(ctx, nil, nil) }, true, schedcore.UnschedulableAndUnresolvable},
		{"volume zone skips a pod with a claim", func(ctx context.Context, _ any) (schedcore.Plugin, error) { return NewVolumeZone(ctx, nil, nil) }, true, schedcore.Skip},
		{"volume restrictions skips a pod without claims", func(ctx context.Context, _ any) (schedcore.Plugin, error) {
			return NewVolumeRestrictions(ctx, nil, nil)
		}, false, schedcore.Skip},
		{"node volume limits skips a pod with a claim", func(ctx context.Context, _ any) (schedcore.Plugin, error) { return NewNodeVolumeLimits(ctx, nil, nil) }, true, schedcore.Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.newFn(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			w := schedtest.MakePod("p")
			if tt.withPVC {
				w.PVC("data")
			}
			_, st := p.(schedcore.PreFilterPlugin).PreFilter(context.Background(), schedcore.NewCycleState(), w.Obj(), nil)
			if st.Code() != tt.wantCode {
				t.Fatalf("code = %v, want %v (%v)", st.Code(), tt.wantCode, st)
			}
			if tt.wantCode == schedcore.UnschedulableAndUnresolvable && !strings.Contains(st.Message(), "(data)") {
				t.Errorf("message %q does not name the claim", st.Message())
			}
		})
	}
}
