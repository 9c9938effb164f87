package live

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestPodStatusPatch(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	const msg = "0/3 nodes are available: 3 Insufficient cpu."
	pending := func(conds ...v1.PodCondition) *v1.Pod {
		p := schedtest.MakePod("p").Obj()
		p.Generation = 2
		p.Status.Conditions = conds
		return p
	}
	failedCond := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable, Message: msg, ObservedGeneration: 2, LastTransitionTime: earlier}
	withNNN := func(p *v1.Pod, n string) *v1.Pod { p.Status.NominatedNodeName = n; return p }
	override := func(n string) *schedcore.NominatingInfo {
		return &schedcore.NominatingInfo{NominatedNodeName: n, NominatingMode: schedcore.ModeOverride}
	}
	tests := []struct {
		name       string
		pod        *v1.Pod
		reason     string
		msg        string
		nominating *schedcore.NominatingInfo
		want       string
	}{
		{
			name: "the first failure adds the condition, transitioned now, observed at the pod's generation",
			pod:  pending(), reason: v1.PodReasonUnschedulable, msg: msg,
			want: `{"status":{"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-11-01T12:00:00Z","message":"0/3 nodes are available: 3 Insufficient cpu.","observedGeneration":2,"reason":"Unschedulable","status":"False","type":"PodScheduled"}]}}`,
		},
		{
			name: "the same failure again sends nothing",
			pod:  pending(failedCond), reason: v1.PodReasonUnschedulable, msg: msg,
		},
		{
			name: "a new message keeps the transition time of the unchanged status",
			pod:  pending(failedCond), reason: v1.PodReasonUnschedulable, msg: "0/4 nodes are available: 4 Too many pods.",
			want: `{"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"conditions":[{"message":"0/4 nodes are available: 4 Too many pods.","type":"PodScheduled"}]}}`,
		},
		{
			name: "a scheduler error after unschedulable changes the reason",
			pod:  pending(failedCond), reason: v1.PodReasonSchedulerError, msg: msg,
			want: `{"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"conditions":[{"reason":"SchedulerError","type":"PodScheduled"}]}}`,
		},
		{
			name: "a nomination sets the nominated node name",
			pod:  pending(failedCond), reason: v1.PodReasonUnschedulable, msg: msg, nominating: override("n2"),
			want: `{"status":{"nominatedNodeName":"n2"}}`,
		},
		{
			name: "clearing the nomination removes the nominated node name",
			pod:  withNNN(pending(failedCond), "n2"), reason: v1.PodReasonUnschedulable, msg: msg, nominating: override(""),
			want: `{"status":{"nominatedNodeName":null}}`,
		},
		{
			name: "a no-op nomination leaves the nominated node name",
			pod:  withNNN(pending(failedCond), "n2"), reason: v1.PodReasonUnschedulable, msg: msg,
			nominating: &schedcore.NominatingInfo{NominatedNodeName: "n3", NominatingMode: schedcore.ModeNoop},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pod.DeepCopy()
			patch, err := podStatusPatch(tt.pod, unschedulableCondition(tt.pod, tt.reason, tt.msg), tt.nominating, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(patch)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.pod); diff != "" {
				t.Errorf("the pod was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestAPIBinderRetriesAndResolvesUncertainBindings(t *testing.T) {
	defer func(b wait.Backoff, d time.Duration) { bindBackoff, resolveInterval = b, d }(bindBackoff, resolveInterval)
	bindBackoff, resolveInterval = wait.Backoff{Steps: 3, Duration: time.Millisecond}, time.Millisecond
	reset := &url.Error{Op: "Post", URL: "https://127.0.0.1/binding", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	refused := &url.Error{Op: "Post", URL: "https://127.0.0.1/binding", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	conflict := apierrors.NewConflict(v1.Resource("pods/binding"), "p", errors.New(`pod p is already assigned to node "n1"`))
	tests := []struct {
		name string
		// answers are the binding calls' results in turn (the last one
		// repeats); commitOn says on which call (1-based) the binding
		// takes effect whatever is answered, 0 never.
		answers  []error
		commitOn int
		// boundTo is where someone else bound the pod beforehand.
		boundTo string
		// getErr, when set, answers every read of the pod.
		getErr    error
		wantErr   bool
		wantBinds int
	}{
		{name: "a binding answered with success is a success", answers: []error{nil}, commitOn: 1, wantBinds: 1},
		{name: "a refused connection is retried with kube's backoff, then fails", answers: []error{refused}, wantErr: true, wantBinds: 3},
		{name: "a refused connection then success binds", answers: []error{refused, nil}, commitOn: 2, wantBinds: 2},
		{name: "a binding that took effect but whose answer was lost is a success", answers: []error{reset, conflict}, commitOn: 1, wantBinds: 2},
		{name: "a lost answer on every try of a binding that took effect is a success", answers: []error{reset}, commitOn: 1, wantBinds: 3},
		{name: "lost answers of a binding that never took effect fail", answers: []error{reset}, wantErr: true, wantBinds: 3},
		{name: "a pod another binder bound elsewhere fails after a lost answer", answers: []error{reset, conflict}, boundTo: "n2", wantErr: true, wantBinds: 2},
		{name: "a conflict without a lost answer fails at once", answers: []error{conflict}, boundTo: "n2", wantErr: true, wantBinds: 1},
		{name: "a read the server refuses after a lost answer fails at once", answers: []error{reset}, commitOn: 1,
			getErr: apierrors.NewForbidden(v1.Resource("pods"), "p", errors.New("no")), wantErr: true, wantBinds: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := schedtest.MakePod("p").Obj()
			pod.Namespace, pod.UID = "default", "uid-p"
			pod.Spec.NodeName = tc.boundTo
			client := fake.NewClientset(pod)
			binds := 0
			client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "binding" {
					return false, nil, nil
				}
				binds++
				if binds == tc.commitOn {
					p := pod.DeepCopy()
					p.Spec.NodeName = "n1"
					if err := client.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), p, p.Namespace); err != nil {
						t.Fatal(err)
					}
				}
				return true, nil, tc.answers[min(binds, len(tc.answers))-1]
			})
			if tc.getErr != nil {
				client.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.getErr
				})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := newAPIBinder(client).Bind(ctx, pod, "n1")
			if ctx.Err() != nil {
				t.Fatal("Bind waited until its context ended")
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("Bind() = %v, want error %v", err, tc.wantErr)
			}
			if binds != tc.wantBinds {
				t.Errorf("%d binding calls, want %d", binds, tc.wantBinds)
			}
		})
	}
}
