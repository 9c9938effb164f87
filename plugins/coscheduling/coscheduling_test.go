package coscheduling

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// objects is a fake ObjectLister.
type objects struct {
	pods   []*v1.Pod
	others map[string]runtime.Object
}

func (o *objects) Pods(ns string) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range o.pods {
		if p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

func (o *objects) Get(apiVersion, kind, ns, name string) (runtime.Object, bool) {
	obj, ok := o.others[apiVersion+"/"+kind+"/"+ns+"/"+name]
	return obj, ok
}

func crd(name string, minMember int64, extra map[string]any) runtime.Object {
	spec := map[string]any{"minMember": minMember}
	for k, v := range extra {
		spec[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": PodGroupAPIVersion, "kind": PodGroupKind,
		"metadata": map[string]any{"name": name, "namespace": "ns"}, "spec": spec}}
}

func native(name string, minCount int32) runtime.Object {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	if minCount > 0 {
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
	} else {
		pg.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	}
	return pg
}

func labelled(name, group string) *v1.Pod {
	return schedtest.MakePod(name).Namespace("ns").Label(PodGroupLabel, group).Req("cpu", "1").Obj()
}

func nativePod(name, group string) *v1.Pod {
	p := schedtest.MakePod(name).Namespace("ns").Req("cpu", "1").Obj()
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	return p
}

type fixture struct {
	pl  *Coscheduling
	clk *clocktesting.FakeClock
}

func newPlugin(t *testing.T, args *CoschedulingArgs, pods []*v1.Pod, nodes []*v1.Node, pgs map[string]runtime.Object) fixture {
	t.Helper()
	others := map[string]runtime.Object{}
	for name, obj := range pgs {
		apiVersion := PodGroupAPIVersion
		if _, ok := obj.(*schedulingv1beta1.PodGroup); ok {
			apiVersion = NativePodGroupAPIVersion
		}
		others[apiVersion+"/PodGroup/ns/"+name] = obj
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := schedcore.NewHandle(schedcore.NewSnapshot(pods, nodes), 1, schedcore.WithClock(clk), schedcore.WithObjects(&objects{pods: pods, others: others}))
	var obj runtime.Object
	if args != nil {
		obj = args
	}
	pl, err := New(context.Background(), obj, h)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{pl: pl.(*Coscheduling), clk: clk}
}

func i64(v int64) *int64 { return &v }

func TestArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    runtime.Object
		wantErr string
		want    [2]time.Duration
	}{
		{name: "nil args take scheduler-plugins' defaults", want: [2]time.Duration{60 * time.Second, 0}},
		{name: "set values are used", args: &CoschedulingArgs{PermitWaitingTimeSeconds: i64(5), PodGroupBackoffSeconds: i64(7)}, want: [2]time.Duration{5 * time.Second, 7 * time.Second}},
		{name: "a negative wait names the field", args: &CoschedulingArgs{PermitWaitingTimeSeconds: i64(-1)}, wantErr: "permitWaitingTimeSeconds: Invalid value: -1: must be greater than or equal to 0"},
		{name: "a negative backoff names the field", args: &CoschedulingArgs{PodGroupBackoffSeconds: i64(-2)}, wantErr: "podGroupBackoffSeconds: Invalid value: -2: must be greater than or equal to 0"},
		{name: "args of another type are refused", args: &schedulingv1beta1.PodGroup{}, wantErr: "want args to be of type CoschedulingArgs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := New(context.Background(), tt.args, schedcore.NewHandle(nil, 1))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cs := pl.(*Coscheduling)
			if got := [2]time.Duration{cs.defaultTimeout, cs.backoff}; got != tt.want {
				t.Errorf("timeout, backoff = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreEnqueue(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		pods []*v1.Pod
		pgs  map[string]runtime.Object
		want *schedcore.Status
	}{
		{name: "a pod in no group passes", pod: schedtest.MakePod("p").Obj()},
		{name: "a labelled pod without its PodGroup passes (Permit rejects it)", pod: labelled("p", "g")},
		{name: "a gang with fewer pods than minMember is held", pod: labelled("p", "g"), pods: []*v1.Pod{labelled("p", "g"), labelled("q", "g")},
			pgs: map[string]runtime.Object{"g": crd("g", 3, nil)}, want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonWaitingForMinCount)},
		{name: "pods of another group or finished ones do not count", pod: labelled("p", "g"),
			pods: []*v1.Pod{labelled("p", "g"), labelled("q", "other"), schedtest.MakePod("r").Namespace("ns").Label(PodGroupLabel, "g").Phase(v1.PodSucceeded).Obj()},
			pgs:  map[string]runtime.Object{"g": crd("g", 2, nil)}, want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonWaitingForMinCount)},
		{name: "a gang with minMember pods passes", pod: labelled("p", "g"), pods: []*v1.Pod{labelled("p", "g"), labelled("q", "g")},
			pgs: map[string]runtime.Object{"g": crd("g", 2, nil)}},
		{name: "a native pod waits for its PodGroup", pod: nativePod("p", "g"),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, `waiting for pods's pod group "g" to appear in scheduling queue`)},
		{name: "a native gang counts minCount", pod: nativePod("p", "g"), pods: []*v1.Pod{nativePod("p", "g"), labelled("q", "g")},
			pgs: map[string]runtime.Object{"g": native("g", 2)}, want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonWaitingForMinCount)},
		{name: "a native basic group is no gang", pod: nativePod("p", "g"), pods: []*v1.Pod{nativePod("p", "g")}, pgs: map[string]runtime.Object{"g": native("g", 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newPlugin(t, nil, tt.pods, nil, tt.pgs)
			got := f.pl.PreEnqueue(context.Background(), tt.pod)
			if diff := cmp.Diff(tt.want.Message(), got.Message()); diff != "" || tt.want.Code() != got.Code() {
				t.Errorf("status %v %q, want %v %q", got.Code(), got.Message(), tt.want.Code(), tt.want.Message())
			}
		})
	}
}

// TestNativeMappingOffWithGenericWorkload: with GenericWorkload on, pods
// naming a native PodGroup are kube's pod-group members (GangScheduling),
// never this plugin's: not gated, not grouped, not counted as siblings;
// the label form works as before.
func TestNativeMappingOffWithGenericWorkload(t *testing.T) {
	both := nativePod("b", "g")
	both.Labels = map[string]string{PodGroupLabel: "g"}
	pods := []*v1.Pod{nativePod("p", "g"), both, labelled("q", "g")}
	pgs := map[string]runtime.Object{"g": native("g", 2)}
	tests := []struct {
		name      string
		gate      bool
		pod       *v1.Pod
		want      *schedcore.Status
		wantGroup bool
	}{
		{name: "gate off: a native pod waits for its PodGroup", pod: nativePod("x", "none"),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, `waiting for pods's pod group "none" to appear in scheduling queue`)},
		{name: "gate off: a native gang's pod is grouped (both forms: native wins)", pod: nativePod("p", "g"), wantGroup: true},
		{name: "gate on: a native pod without its PodGroup passes, in no group", gate: true, pod: nativePod("x", "none")},
		{name: "gate on: a native pod of a gang passes, in no group", gate: true, pod: nativePod("p", "g")},
		{name: "gate on: a pod with both forms is in neither", gate: true, pod: both},
		{name: "gate on: a labelled pod is still grouped and counted without the native members", gate: true, pod: labelled("q", "g"),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonWaitingForMinCount), wantGroup: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			others := map[string]runtime.Object{NativePodGroupAPIVersion + "/PodGroup/ns/g": pgs["g"],
				PodGroupAPIVersion + "/PodGroup/ns/g": crd("g", 2, nil)}
			f := schedcore.DefaultFeatures
			f.GenericWorkload = tt.gate
			h := schedcore.NewHandle(schedcore.NewSnapshot(pods, nil), 1, schedcore.WithFeatures(f), schedcore.WithObjects(&objects{pods: pods, others: others}))
			p, err := New(context.Background(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*Coscheduling)
			got := pl.PreEnqueue(context.Background(), tt.pod)
			if tt.want.Code() != got.Code() || tt.want.Message() != got.Message() {
				t.Errorf("PreEnqueue = %v %q, want %v %q", got.Code(), got.Message(), tt.want.Code(), tt.want.Message())
			}
			if _, ok := pl.PodGroup(tt.pod); ok != tt.wantGroup {
				t.Errorf("PodGroup ok = %v, want %v", ok, tt.wantGroup)
			}
		})
	}
}

func TestLessKeepsGroupsTogether(t *testing.T) {
	at := func(sec int) time.Time { return time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC) }
	q := func(p *v1.Pod, sec int) *schedcore.QueuedPodInfo {
		return &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(p), Timestamp: at(sec)}
	}
	pgs := map[string]runtime.Object{"early": crd("early", 2, nil), "late": crd("late", 2, nil)}
	pgs["early"].(*unstructured.Unstructured).SetCreationTimestamp(metav1.NewTime(at(1)))
	pgs["late"].(*unstructured.Unstructured).SetCreationTimestamp(metav1.NewTime(at(5)))
	f := newPlugin(t, nil, nil, nil, pgs)
	high := labelled("high", "late")
	high.Spec.Priority = new(int32)
	*high.Spec.Priority = 10
	tests := []struct {
		name string
		a, b *schedcore.QueuedPodInfo
		want bool
	}{
		{"higher priority first", q(high, 9), q(labelled("e0", "early"), 0), true},
		{"the earlier PodGroup first, whatever the pods' queue times", q(labelled("e1", "early"), 9), q(labelled("l0", "late"), 0), true},
		{"a plain pod queued before a group's creation goes first", q(schedtest.MakePod("plain").Namespace("ns").Obj(), 0), q(labelled("e0", "early"), 0), true},
		{"a plain pod queued after goes after", q(schedtest.MakePod("plain").Namespace("ns").Obj(), 3), q(labelled("e0", "early"), 0), false},
		{"within a group by pod name", q(labelled("e0", "early"), 9), q(labelled("e1", "early"), 0), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.pl.Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreFilter(t *testing.T) {
	node := schedtest.MakeNode("n").Capacity("cpu", "2", "pods", "10").Obj()
	two := []*v1.Pod{labelled("p", "g"), labelled("q", "g")}
	tests := []struct {
		name     string
		pod      *v1.Pod
		pods     []*v1.Pod
		pg       runtime.Object
		backedOf bool
		want     string
	}{
		{name: "a gang with enough pods passes", pod: two[0], pods: two, pg: crd("g", 2, nil)},
		{name: "too few siblings is rejected with scheduler-plugins' message", pod: two[0], pods: two, pg: crd("g", 3, nil),
			want: "pre-filter pod p cannot find enough sibling pods, current pods number: 2, minMember of group: 3"},
		{name: "minResources the cluster holds pass", pod: two[0], pods: two, pg: crd("g", 2, map[string]any{"minResources": map[string]any{"cpu": "2"}})},
		{name: "minResources beyond the cluster show the gap", pod: two[0], pods: two, pg: crd("g", 2, map[string]any{"minResources": map[string]any{"cpu": "4"}}),
			want: "resource gap: cpu: 2"},
		{name: "a group in backoff failed recently", pod: two[0], pods: two, pg: crd("g", 2, nil), backedOf: true, want: "podGroup ns/g failed recently"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newPlugin(t, nil, tt.pods, []*v1.Node{node}, map[string]runtime.Object{"g": tt.pg})
			if tt.backedOf {
				f.pl.backedOff["ns/g"] = f.clk.Now().Add(time.Second)
			}
			_, st := f.pl.PreFilter(context.Background(), schedcore.NewCycleState(), tt.pod, f.pl.h.Snapshot().List())
			if st.Message() != tt.want || (tt.want != "" && st.Code() != schedcore.UnschedulableAndUnresolvable) {
				t.Errorf("status %v %q, want UnschedulableAndUnresolvable %q", st.Code(), st.Message(), tt.want)
			}
		})
	}
}

func TestPermitWaitsForMinMember(t *testing.T) {
	ctx := context.Background()
	pods := []*v1.Pod{labelled("a", "g"), labelled("b", "g"), labelled("c", "g"), labelled("x", "missing")}
	pgs := map[string]runtime.Object{"g": crd("g", 3, nil), "t": crd("t", 3, map[string]any{"scheduleTimeoutSeconds": int64(5)})}
	f := newPlugin(t, nil, pods, nil, pgs)
	state := schedcore.NewCycleState()

	st, d := f.pl.Permit(ctx, state, pods[0], "n")
	if st.Code() != schedcore.Wait || d != 60*time.Second {
		t.Errorf("first member: %v %v, want Wait 1m0s", st.Code(), d)
	}
	f.pl.Reserve(ctx, state, pods[0], "n")
	f.pl.Reserve(ctx, state, pods[1], "n")
	if st, _ := f.pl.Permit(ctx, state, pods[2], "n"); !st.IsSuccess() {
		t.Errorf("third member with two reserved: %v, want success", st.Code())
	}
	f.pl.Unreserve(ctx, state, pods[1], "n")
	if st, _ := f.pl.Permit(ctx, state, pods[2], "n"); st.Code() != schedcore.Wait {
		t.Errorf("after an Unreserve: %v, want Wait", st.Code())
	}
	if st, _ := f.pl.Permit(ctx, state, pods[3], "n"); st.Code() != schedcore.Unschedulable || st.Message() != ErrReasonPodGroupNotFound {
		t.Errorf("without PodGroup: %v %q", st.Code(), st.Message())
	}
	tp := labelled("t0", "t")
	f.pl.h.Objects().(*objects).pods = append(f.pl.h.Objects().(*objects).pods, tp)
	if _, d := f.pl.Permit(ctx, state, tp, "n"); d != 5*time.Second {
		t.Errorf("scheduleTimeoutSeconds: wait %v, want 5s", d)
	}
	if st, _ := f.pl.Permit(ctx, state, schedtest.MakePod("plain").Obj(), "n"); !st.IsSuccess() {
		t.Errorf("a pod in no group: %v", st.Code())
	}
}

func TestPostFilter(t *testing.T) {
	node := schedtest.MakeNode("n").Capacity("cpu", "8", "pods", "20").Obj()
	group := func(n int) []*v1.Pod {
		var ps []*v1.Pod
		for i := 0; i < n; i++ {
			ps = append(ps, labelled(string(rune('a'+i)), "g"))
		}
		return ps
	}
	tests := []struct {
		name     string
		pods     []*v1.Pod
		min      int64
		reserved int
		want     string
	}{
		{name: "a pod in no group keeps kube's message", pods: []*v1.Pod{schedtest.MakePod("plain").Namespace("ns").Obj()}},
		{name: "the group is rejected when a member fails", pods: group(3), min: 3, reserved: 1,
			want: "PodGroup ns/g gets rejected due to Pod c is unschedulable even after PostFilter"},
		{name: "no rejection within a 10% gap", pods: group(10), min: 10, reserved: 9},
		{name: "no rejection once minMember are placed", pods: group(4), min: 2, reserved: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newPlugin(t, &CoschedulingArgs{PodGroupBackoffSeconds: i64(10)}, tt.pods, []*v1.Node{node}, map[string]runtime.Object{"g": crd("g", tt.min, nil)})
			for _, p := range tt.pods[:tt.reserved] {
				f.pl.Reserve(context.Background(), nil, p, "n")
			}
			failing := tt.pods[len(tt.pods)-1]
			_, st := f.pl.PostFilter(context.Background(), nil, failing, schedcore.NewNodeToStatus())
			if st.Code() != schedcore.Unschedulable || st.Message() != tt.want {
				t.Errorf("status %v %q, want Unschedulable %q", st.Code(), st.Message(), tt.want)
			}
			_, backedOff := f.pl.backedOff["ns/g"]
			if backedOff != (tt.want != "") {
				t.Errorf("group backed off = %v", backedOff)
			}
			if tt.want != "" {
				_, pre := f.pl.PreFilter(context.Background(), nil, failing, f.pl.h.Snapshot().List())
				if pre.Message() != "podGroup ns/g failed recently" {
					t.Errorf("PreFilter after the rejection: %q", pre.Message())
				}
			}
		})
	}
}
