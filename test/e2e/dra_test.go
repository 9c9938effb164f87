package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// draDriver is the (simulated) driver of the test's devices in namespace
// ns; no kubelet plugin runs: the scheduler only reads the slices. Each run
// has its own driver, class and pools: the claims of an earlier run keep
// their devices (no controller-manager deletes the objects of a deleted
// namespace, and the scheduler's finalizer protects allocated claims).
func draDriver(ns string) string { return "gpu." + ns + ".e2e.kubectl-sched.io" }

// TestRunAllocatesDRAClaims: on the real API server (which serves
// resource.k8s.io/v1), `run` places a pod whose claim wants an 80Gi GPU on
// the only node with one free, writes the claim's allocation (the device,
// the node selector) and reservedFor, and puts a second pod sharing the
// claim on the same node, reserved for both; a pod whose claim no node can
// satisfy stays pending with the PodScheduled condition and the
// FailedScheduling event the real kube-scheduler v1.37.2 writes for the
// same pod at the same moment (it runs beside ours under its own profile).
func TestRunAllocatesDRAClaims(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile, kubeProfile = "dra", "kubectl-sched-dra", "kube-scheduler-dra"
	groupNodes(ctx, t, c.Client, group,
		cluster.NodeSpec{Name: "dra-gpu-a", CPU: "8", Memory: "32Gi"},
		cluster.NodeSpec{Name: "dra-gpu-b", CPU: "8", Memory: "32Gi"},
		cluster.NodeSpec{Name: "dra-cpu", CPU: "8", Memory: "32Gi"},
	)
	ns := createNamespace(ctx, t, c.Client, "dra")
	driver, class := draDriver(ns), "gpu-"+ns
	createDRA(ctx, t, c.Client, driver, class, map[string]string{"dra-gpu-a": "80Gi", "dra-gpu-b": "40Gi"})

	big := `device.capacity["` + driver + `"].memory.compareTo(quantity("80Gi")) >= 0`
	claims := []*resourceapi.ResourceClaim{
		gpuClaim("big-gpu", class, 1, big),
		// Two 80Gi GPUs: no node has them (one for our scheduler, one for
		// kube-scheduler's twin pod).
		gpuClaim("two-big-gpus", class, 2, big),
		gpuClaim("two-big-gpus-kube", class, 2, big),
	}
	for _, cl := range claims {
		if _, err := c.Client.ResourceV1().ResourceClaims(ns).Create(ctx, cl, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating claim %s: %v", cl.Name, err)
		}
	}
	trainer := claimPod("trainer", profile, group, "big-gpu")
	sharer := claimPod("sharer", profile, group, "big-gpu")
	impossible := claimPod("impossible", profile, group, "two-big-gpus")
	impossibleKube := claimPod("impossible-kube", kubeProfile, group, "two-big-gpus-kube")
	createPods(ctx, t, c.Client, ns, trainer, sharer, impossible, impossibleKube)

	// Before any scheduler runs: snapshot dumps the DRA kinds, the dry-run
	// of the dump allocates as run will, and live explain says per device
	// why the impossible claim fits nowhere.
	ourCfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(ourCfg, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: "+profile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dryMsg := checkDRADryRun(t, c, ns, ourCfg, driver, class)
	e := explainJSON(t, c, impossible.Name, "-n", ns, "--config", ourCfg, "--node", "dra-gpu-a")
	wantGap := fmt.Sprintf("request gpu of claim %s/two-big-gpus: needs 2 free devices of class %s matching %s; dra-gpu-a has 1 free", ns, class, big)
	if n := explainedNode(e, "dra-gpu-a"); n == nil || len(n.Gaps) != 1 || n.Gaps[0].Plugin != "DynamicResources" || n.Gaps[0].Gap != wantGap ||
		!cmp.Equal(n.Gaps[0].Details, []string{driver + "/" + class + "-dra-gpu-a/gpu-0: free"}) {
		t.Errorf("explain %s --node dra-gpu-a: %+v; want the gap %q with one device line", impossible.Name, n, wantGap)
	}

	kubeCfg := filepath.Join(t.TempDir(), "kube-scheduler.yaml")
	body := fmt.Sprintf("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {qps: 1000, burst: 1000}\nprofiles:\n- schedulerName: %s\n", kubeProfile)
	if err := os.WriteFile(kubeCfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	kube, err := c.StartScheduler(ctx, kubeCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kube.Stop(10 * time.Second) })
	startRun(t, c, runOptions{profile: profile})

	pods := map[string]*v1.Pod{}
	for _, p := range []*v1.Pod{trainer, sharer} {
		got := waitForPod(ctx, t, c.Client, ns, p.Name, bound)
		if got.Spec.NodeName != "dra-gpu-a" {
			t.Errorf("pod %s bound to %s; only dra-gpu-a has a free 80Gi GPU", p.Name, got.Spec.NodeName)
		}
		pods[p.Name] = got
	}
	claim, err := c.Client.ResourceV1().ResourceClaims(ns).Get(ctx, "big-gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := claim.Status.Allocation
	if a == nil {
		t.Fatalf("claim big-gpu not allocated after its pods were bound: %+v", claim.Status)
	}
	wantResults := []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: driver, Pool: class + "-dra-gpu-a", Device: "gpu-0"}}
	if d := cmp.Diff(wantResults, a.Devices.Results); d != "" {
		t.Errorf("claim big-gpu allocation (-want +got):\n%s", d)
	}
	wantSelector := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"dra-gpu-a"}}}}}}
	if d := cmp.Diff(wantSelector, a.NodeSelector); d != "" {
		t.Errorf("claim big-gpu allocation's node selector (-want +got):\n%s", d)
	}
	var reserved []string
	for _, r := range claim.Status.ReservedFor {
		p := pods[r.Name]
		if r.Resource != "pods" || p == nil || r.UID != p.UID {
			t.Errorf("claim big-gpu reserved for %+v: not one of the test's bound pods", r)
			continue
		}
		reserved = append(reserved, r.Name)
	}
	if len(reserved) != 2 {
		t.Errorf("claim big-gpu reserved for %v, want trainer and sharer", claim.Status.ReservedFor)
	}

	// The impossible pods: ours and kube-scheduler's say the same.
	want := waitForPod(ctx, t, c.Client, ns, impossibleKube.Name, unschedulable)
	got := waitForPod(ctx, t, c.Client, ns, impossible.Name, unschedulable)
	wantMsg, gotMsg := podCondition(want, v1.PodScheduled).Message, podCondition(got, v1.PodScheduled).Message
	if gotMsg != wantMsg {
		t.Errorf("PodScheduled condition of a pod whose claim fits no node:\n got %q\nwant %q (kube-scheduler's)", gotMsg, wantMsg)
	}
	wantEvent := waitForEvent(ctx, t, c.Client, ns, impossibleKube.Name, "FailedScheduling")
	gotEvent := waitForEvent(ctx, t, c.Client, ns, impossible.Name, "FailedScheduling")
	if gotEvent.Note != wantEvent.Note || gotEvent.Type != v1.EventTypeWarning {
		t.Errorf("FailedScheduling event: %s %q; want Warning %q (kube-scheduler's)", gotEvent.Type, gotEvent.Note, wantEvent.Note)
	}
	t.Logf("impossible: %s", gotMsg)
	if dryMsg != wantMsg {
		t.Errorf("dry-run of the snapshot: message %q; want kube-scheduler's %q", dryMsg, wantMsg)
	}
	for _, name := range []string{"two-big-gpus", "two-big-gpus-kube"} {
		cl, err := c.Client.ResourceV1().ResourceClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cl.Status.Allocation != nil || len(cl.Status.ReservedFor) != 0 {
			t.Errorf("claim %s of a pending pod has status %+v; want none", name, cl.Status)
		}
	}
	if p, _ := c.Client.CoreV1().Pods(ns).Get(ctx, impossible.Name, metav1.GetOptions{}); p != nil && p.Spec.NodeName != "" {
		t.Errorf("pod %s bound to %s; its claim fits no node", p.Name, p.Spec.NodeName)
	}

	// A driver publishes four 80Gi GPUs on dra-cpu: the new ResourceSlice
	// requeues both pending pods, and both schedulers place them there.
	s := gpuSlice(driver, class, "dra-cpu", "80Gi", 4)
	if _, err := c.Client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ResourceSlice: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Client.ResourceV1().ResourceSlices().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
	for _, p := range []*v1.Pod{impossible, impossibleKube} {
		if got := waitForPod(ctx, t, c.Client, ns, p.Name, bound); got.Spec.NodeName != "dra-cpu" {
			t.Errorf("pod %s bound to %s after the slice appeared; want dra-cpu", p.Name, got.Spec.NodeName)
		}
	}
	cl, err := c.Client.ResourceV1().ResourceClaims(ns).Get(ctx, "two-big-gpus", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := cl.Status.Allocation; a == nil || len(a.Devices.Results) != 2 || a.Devices.Results[0].Pool != class+"-dra-cpu" || len(cl.Status.ReservedFor) != 1 {
		t.Errorf("claim two-big-gpus after its pod was bound: %+v", cl.Status)
	}
}

// checkDRADryRun dumps the cluster with `snapshot -A`, checks the DRA
// kinds are in it, dry-runs the dump with the test's profile and checks
// that trainer and sharer get dra-gpu-a's GPU (the claim allocated once)
// and that impossible fits nowhere; it returns impossible's message.
func checkDRADryRun(t *testing.T, c *cluster.Cluster, ns, cfg, driver, class string) string {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "cluster.yaml")
	if code, _, stderr := sched(t, c, "snapshot", "-A", "--output-file", dump); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: DeviceClass", "kind: ResourceSlice", "kind: ResourceClaim", "name: " + class, "driver: " + driver} {
		if !strings.Contains(string(b), want) {
			t.Errorf("snapshot lacks %q", want)
		}
	}
	var out, errOut bytes.Buffer
	code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, cli.Settings{}, []string{"dryrun", "-f", dump, "--config", cfg, "-o", "json"})
	if code != 0 {
		t.Fatalf("dryrun of the snapshot: exit %d: %s", code, errOut.String())
	}
	var rep report.DryRun
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	dev := report.AllocatedDevice{Claim: ns + "/big-gpu", Request: "gpu", Driver: driver, Pool: class + "-dra-gpu-a", Device: "gpu-0"}
	placed := map[string]report.Placement{}
	for _, p := range rep.Placements {
		placed[p.Pod] = p
	}
	for _, name := range []string{"trainer", "sharer"} {
		p, ok := placed[ns+"/"+name]
		if !ok || p.Node != "dra-gpu-a" || len(p.Devices) != 1 || p.Devices[0].Claim != dev.Claim || p.Devices[0].Device != dev.Device || p.Devices[0].Pool != dev.Pool || p.Devices[0].Driver != dev.Driver {
			t.Errorf("dry-run of the snapshot placed %s as %+v; want dra-gpu-a with %+v", name, p, dev)
		}
	}
	for _, u := range rep.Unschedulable {
		if u.Pod == ns+"/impossible" {
			return u.Message
		}
	}
	t.Errorf("dry-run of the snapshot: %s/impossible not unschedulable (placements %+v)", ns, rep.Placements)
	return ""
}

func explainedNode(e *report.Explanation, node string) *report.ExplainNode {
	for i := range e.Nodes {
		if e.Nodes[i].Node == node {
			return &e.Nodes[i]
		}
	}
	return nil
}

// createDRA creates the DeviceClass of the test's GPUs and, per node, a
// ResourceSlice with one GPU of the given memory; they are deleted when the
// test ends.
func createDRA(ctx context.Context, t *testing.T, client kubernetes.Interface, driver, class string, gpus map[string]string) {
	t.Helper()
	dc := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`}}}}}
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating DeviceClass: %v", err)
	}
	t.Cleanup(func() {
		_ = client.ResourceV1().DeviceClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	for node, mem := range gpus {
		s := gpuSlice(driver, class, node, mem, 1)
		if _, err := client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating ResourceSlice: %v", err)
		}
		t.Cleanup(func() {
			_ = client.ResourceV1().ResourceSlices().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
		})
	}
}

// gpuSlice is the driver's ResourceSlice for the node (pool
// <prefix>-<node>) with n GPUs of the given memory, gpu-0 to gpu-<n-1>.
func gpuSlice(driver, prefix, node, mem string, n int) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + node}, Spec: resourceapi.ResourceSliceSpec{
		Driver:   driver,
		NodeName: ptr.To(node),
		Pool:     resourceapi.ResourcePool{Name: prefix + "-" + node, Generation: 1, ResourceSliceCount: 1},
	}}
	for i := range n {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To("e2e")}},
			Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(mem)}}})
	}
	return s
}

// gpuClaim is a claim for count devices of the class matching the CEL
// selector, in one request named gpu.
func gpuClaim(name, class string, count int64, selector string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
		Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count,
			Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: selector}}},
		}}},
	}}}
}

// claimPod is a pod of the profile on the group's nodes using the claim.
func claimPod(name, profile, group, claim string) *v1.Pod {
	p := ourPod(name, "1", profile, group)
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claim)}}
	p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	return p
}
