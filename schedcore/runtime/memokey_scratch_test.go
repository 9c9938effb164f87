package runtime_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestMemoKeyBytesIsString checks that Bytes writes what String writes for
// the same bytes: keys built either way must find the same tables.
func TestMemoKeyBytesIsString(t *testing.T) {
	for _, b := range [][]byte{nil, {}, []byte("a"), []byte("\x00\x01"), make([]byte, 300)} {
		want := new(schedcore.MemoKey).Int(1).String(string(b)).String("z").Key()
		got := new(schedcore.MemoKey).Int(1).Bytes(b).String("z").Key()
		if got != want {
			t.Errorf("Bytes(%q) = %q, want %q", b, got, want)
		}
	}
}

// keyedPlugin is a NodeLocalFilter and NodeLocalScorer whose key is the
// pod's label named after the plugin.
type keyedPlugin struct{ name string }

func (p keyedPlugin) Name() string { return p.name }
func (p keyedPlugin) Filter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}
func (p keyedPlugin) FilterKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	k.String(pod.Labels[p.name])
	return true
}
func (p keyedPlugin) Score(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) (int64, *schedcore.Status) {
	return 0, nil
}
func (p keyedPlugin) ScoreKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	k.String(pod.Labels[p.name]).Int(1)
	return true
}

var (
	_ schedcore.NodeLocalFilter = keyedPlugin{}
	_ schedcore.NodeLocalScorer = keyedPlugin{}
)

// TestEachPluginsViewHasItsOwnKey checks that the framework, which builds
// the cycle's memo keys in one reused buffer, looks each plugin's view up
// under exactly the key the plugin wrote, in every cycle: never with
// bytes left from the plugin before it or from an earlier cycle.
func TestEachPluginsViewHasItsOwnKey(t *testing.T) {
	reg := schedcore.Registry{}
	var enabled []configv1.Plugin
	for _, n := range []string{"A", "B", "C"} {
		reg[n] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return keyedPlugin{n}, nil
		}}
		enabled = append(enabled, configv1.Plugin{Name: n})
	}
	_, snap := slotNodes()
	fw := keyedFramework(t, reg, enabled, snap)
	pods := []map[string]string{
		{"A": "long-value-of-a", "B": "b", "C": "c"},
		{"A": "a2", "B": "another-long-value", "C": ""},
	}
	filterKey := func(v string) string { return new(schedcore.MemoKey).String(v).Key() }
	scoreKey := func(v string) string { return new(schedcore.MemoKey).String(v).Int(1).Key() }
	want := [3][]string{}
	wantScore := [3][]string{}
	for _, labels := range pods {
		pod := schedtest.MakePod("p").Obj()
		pod.Labels = labels
		state := schedcore.NewCycleState()
		if _, s, _ := fw.RunPreFilterPlugins(context.Background(), state, pod); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		if _, s := fw.RunScorePlugins(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		for i, n := range []string{"A", "B", "C"} {
			want[i] = append(want[i], filterKey(labels[n]))
			wantScore[i] = append(wantScore[i], scoreKey(labels[n]))
		}
	}
	gotFilter, gotScore := fw.MemoKeys()
	sortKeys := cmp.Transformer("sort", func(in []string) map[string]bool {
		m := map[string]bool{}
		for _, k := range in {
			m[k] = true
		}
		return m
	})
	if diff := cmp.Diff(want[:], gotFilter, sortKeys); diff != "" {
		t.Errorf("filter memo keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantScore[:], gotScore, sortKeys); diff != "" {
		t.Errorf("score memo keys (-want +got):\n%s", diff)
	}
}

// keyedFramework is a framework of the plugins enabled from reg, with the
// test slots plugin for the queue sort and the binder.
func keyedFramework(t *testing.T, reg schedcore.Registry, enabled []configv1.Plugin, snap *schedcore.Snapshot) *schedruntime.Framework {
	t.Helper()
	reg["Slots"] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
		return slots{}, nil
	}}
	enabled = append(enabled, configv1.Plugin{Name: "Slots"})
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: enabled},
	}}
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fw
}
