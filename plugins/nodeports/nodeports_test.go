package nodeports

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// newPod makes a pod on host with ports written "PROTO/IP/PORT".
func newPod(host string, ports ...string) *v1.Pod {
	w := schedtest.MakePod("p-" + strings.Join(ports, "-")).Node(host)
	for _, p := range ports {
		parts := strings.Split(p, "/")
		port, _ := strconv.Atoi(parts[2])
		w.HostPort(int32(port), v1.Protocol(parts[0]), parts[1])
	}
	return w.Obj()
}

func nodeInfo(pods ...*v1.Pod) *schedcore.NodeInfo {
	ni := schedcore.NewNodeInfo(pods...)
	ni.SetNode(schedtest.MakeNode("m1").Obj())
	return ni
}

func withInitPort(sidecar bool, port int32) *v1.Pod {
	p := schedtest.MakePod("p").Obj()
	c := v1.Container{Name: "init", Image: "pause", Ports: []v1.ContainerPort{{ContainerPort: port, HostPort: port, Protocol: v1.ProtocolTCP}}}
	if sidecar {
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

func newPlugin(t *testing.T) *NodePorts {
	t.Helper()
	p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*NodePorts)
}

func TestFilter(t *testing.T) {
	conflict := schedcore.NewStatus(schedcore.Unschedulable, ErrReason)
	tests := []struct {
		name          string
		pod           *v1.Pod
		nodeInfo      *schedcore.NodeInfo
		wantPreFilter *schedcore.Status
		want          *schedcore.Status
	}{
		{name: "a pod without host ports is skipped", pod: &v1.Pod{}, nodeInfo: nodeInfo(), wantPreFilter: schedcore.NewStatus(schedcore.Skip)},
		{
			name: "a container port without hostPort is not wanted",
			pod: func() *v1.Pod {
				p := schedtest.MakePod("p").Obj()
				p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}}
				return p
			}(),
			nodeInfo:      nodeInfo(),
			wantPreFilter: schedcore.NewStatus(schedcore.Skip),
		},
		{name: "another port is free", pod: newPod("m1", "UDP/127.0.0.1/8080"), nodeInfo: nodeInfo(newPod("m1", "UDP/127.0.0.1/9090"))},
		{name: "the same UDP port conflicts", pod: newPod("m1", "UDP/127.0.0.1/8080"), nodeInfo: nodeInfo(newPod("m1", "UDP/127.0.0.1/8080")), want: conflict},
		{name: "the same TCP port conflicts", pod: newPod("m1", "TCP/127.0.0.1/8080"), nodeInfo: nodeInfo(newPod("m1", "TCP/127.0.0.1/8080")), want: conflict},
		{name: "the same port on another host IP is free", pod: newPod("m1", "TCP/127.0.0.1/8080"), nodeInfo: nodeInfo(newPod("m1", "TCP/127.0.0.2/8080"))},
		{name: "the same port with another protocol is free", pod: newPod("m1", "UDP/127.0.0.1/8080"), nodeInfo: nodeInfo(newPod("m1", "TCP/127.0.0.1/8080"))},
		{name: "a conflict on the second port rejects", pod: newPod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), nodeInfo: nodeInfo(newPod("m1", "UDP/127.0.0.1/8080")), want: conflict},
		{name: "a conflict on the first port rejects", pod: newPod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"), nodeInfo: nodeInfo(newPod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")), want: conflict},
		{name: "a wanted 0.0.0.0 conflicts with a used specific IP", pod: newPod("m1", "TCP/0.0.0.0/8001"), nodeInfo: nodeInfo(newPod("m1", "TCP/127.0.0.1/8001")), want: conflict},
		{name: "a wanted 0.0.0.0 after a free IP still conflicts", pod: newPod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), nodeInfo: nodeInfo(newPod("m1", "TCP/127.0.0.1/8001")), want: conflict},
		{name: "a wanted specific IP conflicts with a used 0.0.0.0", pod: newPod("m1", "TCP/127.0.0.1/8001"), nodeInfo: nodeInfo(newPod("m1", "TCP/0.0.0.0/8001")), want: conflict},
		{name: "a used 0.0.0.0 with another protocol is free", pod: newPod("m1", "UDP/127.0.0.1/8001"), nodeInfo: nodeInfo(newPod("m1", "TCP/0.0.0.0/8001"))},
		{name: "a used 0.0.0.0 UDP port conflicts", pod: newPod("m1", "UDP/127.0.0.1/8001"), nodeInfo: nodeInfo(newPod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")), want: conflict},
		{name: "an empty protocol and host IP mean TCP on 0.0.0.0", pod: newPod("m1", "//8001"), nodeInfo: nodeInfo(newPod("m1", "TCP/127.0.0.1/8001")), want: conflict},
		{name: "a plain init container's host port is not wanted", pod: withInitPort(false, 8001), nodeInfo: nodeInfo(newPod("m1", "TCP/0.0.0.0/8001")), wantPreFilter: schedcore.NewStatus(schedcore.Skip)},
		{name: "a sidecar's host port is wanted and conflicts", pod: withInitPort(true, 8001), nodeInfo: nodeInfo(newPod("m1", "TCP/0.0.0.0/8001")), want: conflict},
		{name: "a sidecar's host port used on the node by another sidecar conflicts", pod: withInitPort(true, 8001), nodeInfo: nodeInfo(withInitPort(true, 8001)), want: conflict},
	}
	pl := newPlugin(t)
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state := schedcore.NewCycleState()
			_, s := pl.PreFilter(ctx, state, tc.pod, nil)
			if diff := cmp.Diff(tc.wantPreFilter, s); diff != "" {
				t.Fatalf("PreFilter (-want +got):\n%s", diff)
			}
			if s.IsSkip() {
				return
			}
			got := pl.Filter(ctx, state, tc.pod, tc.nodeInfo)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterWithoutPreFilterIsAnError(t *testing.T) {
	got := newPlugin(t).Filter(context.Background(), schedcore.NewCycleState(), &v1.Pod{}, nodeInfo())
	want := schedcore.NewStatus(schedcore.Error, `reading "PreFilterNodePorts" from cycleState: not found`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
}

func TestFits(t *testing.T) {
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing *schedcore.NodeInfo
		want     bool
	}{
		{name: "non-conflicting ports fit", pod: newPod("p", "TCP/127.0.0.1/80"), existing: nodeInfo(newPod("m1", "TCP/127.0.0.1/9090")), want: true},
		{
			name:     "multiple non-conflicting ports fit",
			pod:      newPod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
			existing: nodeInfo(newPod("m1", "TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080")),
			want:     true,
		},
		{name: "the same port on different protocols fits", pod: newPod("m1", "TCP/127.0.0.1/80"), existing: nodeInfo(newPod("m1", "UDP/127.0.0.1/80")), want: true},
		{name: "a conflicting port does not fit", pod: newPod("m1", "TCP/127.0.0.1/80"), existing: nodeInfo(newPod("m1", "TCP/127.0.0.1/80"))},
		{
			name:     "one conflict among several ports does not fit",
			pod:      newPod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
			existing: nodeInfo(newPod("m1", "TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080")),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fits(tc.pod, tc.existing); got != tc.want {
				t.Errorf("Fits = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	events, err := newPlugin(t).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("events = %+v, want 2", events)
	}
	if want := (schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}); events[0].Event != want || events[0].QueueingHintFn == nil {
		t.Errorf("events[0] = %+v, want %+v with a hint", events[0].Event, want)
	}
	if want := (schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}); events[1].Event != want || events[1].QueueingHintFn != nil {
		t.Errorf("events[1] = %+v, want %+v without a hint", events[1].Event, want)
	}
}

func TestIsSchedulableAfterAssignedPodDeleted(t *testing.T) {
	pod := schedtest.MakePod("p").HostPort(8080, "", "").Obj()
	nominated := schedtest.MakePod("q").HostPort(8080, "", "").Obj()
	nominated.Status.NominatedNodeName = "n"
	tests := []struct {
		name    string
		oldObj  any
		want    schedcore.QueueingHint
		wantErr bool
	}{
		{name: "an old object that is not a pod queues with an error", oldObj: "not-a-pod", want: schedcore.Queue, wantErr: true},
		{name: "a deleted unscheduled pod is skipped", oldObj: schedtest.MakePod("q").HostPort(8080, "", "").Obj(), want: schedcore.QueueSkip},
		{name: "a deleted pod without host ports is skipped", oldObj: schedtest.MakePod("q").Node("n").Obj(), want: schedcore.QueueSkip},
		{name: "a deleted pod with an unrelated host port is skipped", oldObj: schedtest.MakePod("q").Node("n").HostPort(8081, "", "").Obj(), want: schedcore.QueueSkip},
		{name: "a deleted pod releasing the wanted port queues", oldObj: schedtest.MakePod("q").Node("n").HostPort(8080, "", "").Obj(), want: schedcore.Queue},
		{name: "a deleted nominated pod releasing the wanted port queues", oldObj: nominated, want: schedcore.Queue},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterAssignedPodDeleted(logr.Discard(), pod, tc.oldObj, nil)
			if (err != nil) != tc.wantErr {
				t.Errorf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}
