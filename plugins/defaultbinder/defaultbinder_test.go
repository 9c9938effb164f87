package defaultbinder

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

type fakeBinder struct {
	err   error
	pod   string
	node  string
	calls int
}

func (f *fakeBinder) Bind(_ context.Context, pod *v1.Pod, node string) error {
	f.calls++
	f.pod, f.node = schedcore.PodName(pod), node
	return f.err
}

func TestBind(t *testing.T) {
	tests := []struct {
		name      string
		binder    *fakeBinder
		want      *schedcore.Status
		wantCalls int
	}{
		{name: "a successful binding succeeds", binder: &fakeBinder{}, wantCalls: 1},
		{name: "a binder error is an Error status", binder: &fakeBinder{err: errors.New("binding rejected")}, want: schedcore.NewStatus(schedcore.Error, "binding rejected"), wantCalls: 1},
		{name: "no binder is an Error status", want: schedcore.NewStatus(schedcore.Error, ErrNoBinder.Error())},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []schedcore.HandleOption
			if tc.binder != nil {
				opts = append(opts, schedcore.WithBinder(tc.binder))
			}
			p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0, opts...))
			if err != nil {
				t.Fatal(err)
			}
			pod := schedtest.MakePod("foo").Obj()
			got := p.(*DefaultBinder).Bind(context.Background(), schedcore.NewCycleState(), pod, "n1")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Bind (-want +got):\n%s", diff)
			}
			if tc.binder != nil {
				if tc.binder.calls != tc.wantCalls || tc.binder.pod != "default/foo" || tc.binder.node != "n1" {
					t.Errorf("binder got %d calls for %s on %s, want %d for default/foo on n1", tc.binder.calls, tc.binder.pod, tc.binder.node, tc.wantCalls)
				}
			}
		})
	}
}
