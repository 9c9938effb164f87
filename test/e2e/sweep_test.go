package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/internal/sweep"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// copyExampleStudy copies examples/study.yaml and the files it reads into
// a new directory, so that its results go there and not into the tree.
func copyExampleStudy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"study.yaml", "cluster.yaml", "trace.yaml", "sched-config.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "study.yaml")
}

// schedCtx runs kubectl sched in-process with ctx, without adding flags.
func schedCtx(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code = cli.ExecuteContext(ctx, streams, cli.Settings{}, args)
	return code, out.String(), errOut.String()
}

// TestSweepOnCluster runs examples/study.yaml as an Indexed Job against a
// real kube-apiserver. There is no Job controller nor kubelet here, so the
// test does their part: for each index of the Job it read back, it lays
// out the pod's volumes (the study ConfigMaps' items at their paths, an
// empty directory for the results), expands $(JOB_COMPLETION_INDEX) in the
// container's args as the kubelet does, and runs them as the pod's
// ServiceAccount (impersonated: the Role made for it must be enough), the
// mount paths mapped into a temporary root. The `sweep --on-cluster` that
// created the Job waits for the results meanwhile, then prints them: the
// same bytes as a local sweep's, and so does `--on-cluster --collect`.
func TestSweepOnCluster(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, c.Client, "sweep")
	study := copyExampleStudy(t)
	local := filepath.Join(t.TempDir(), "local.results")

	want := map[string]string{}
	for _, format := range []string{"json", "table", "csv"} {
		args := []string{"sweep", "-f", study, "--results", local, "-o", format}
		if format != "json" {
			args = append(args, "--collect")
		}
		code, out, stderr := schedCtx(ctx, args...)
		if code != 0 {
			t.Fatalf("local sweep -o %s: exit %d: %s", format, code, stderr)
		}
		want[format] = out
	}

	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := schedCtx(ctx, "sweep", "-f", study, "--on-cluster", "--image", "kubectl-sched:e2e", "-n", ns,
			"--parallelism", "2", "-o", "json", "--kubeconfig", c.Kubeconfig)
		done <- result{code, out, stderr}
	}()
	var job *batchv1.Job
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case r := <-done:
			t.Fatalf("sweep --on-cluster ended before its Job was made: exit %d: %s", r.code, r.stderr)
		default:
		}
		j, err := c.Client.BatchV1().Jobs(ns).Get(ctx, "sweep-study", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		job = j
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("waiting for the Job: %v", err)
	}
	if got := *job.Spec.Completions; got != 4 || *job.Spec.CompletionMode != batchv1.IndexedCompletion || *job.Spec.Parallelism != 2 {
		t.Fatalf("job: completions %d, mode %s, parallelism %d; want 4 Indexed 2", got, *job.Spec.CompletionMode, *job.Spec.Parallelism)
	}
	// The pods run two at a time, as the Job's parallelism says.
	var wg sync.WaitGroup
	sem := make(chan struct{}, *job.Spec.Parallelism)
	errs := make([]string, *job.Spec.Completions)
	for i := range int(*job.Spec.Completions) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = runJobPod(ctx, t, c, job, i)
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("index %d: %s", i, e)
		}
	}
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("sweep --on-cluster did not end after every index ran")
	}
	if r.code != 0 {
		t.Fatalf("sweep --on-cluster: exit %d: %s", r.code, r.stderr)
	}
	if r.out != want["json"] {
		t.Errorf("sweep --on-cluster -o json differs from the local sweep's:\n got %.300s\nwant %.300s", r.out, want["json"])
	}
	for _, line := range []string{"serviceaccount/sweep-study created", "role.rbac.authorization.k8s.io/sweep-study created", "rolebinding.rbac.authorization.k8s.io/sweep-study created", "configmap/sweep-study-study-0 created", "job.batch/sweep-study created"} {
		if !strings.Contains(r.stderr, line+"\n") {
			t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
		}
	}
	for _, format := range []string{"json", "table", "csv"} {
		code, out, stderr := schedCtx(ctx, "sweep", "-f", study, "--on-cluster", "--collect", "-n", ns, "-o", format, "--kubeconfig", c.Kubeconfig)
		if code != 0 || out != want[format] {
			t.Errorf("sweep --on-cluster --collect -o %s: exit %d, stderr %q; output:\n%s\nwant (the local sweep's):\n%s", format, code, stderr, out, want[format])
		}
	}
	cms, err := c.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: sweep.LabelSweep + "=sweep-study," + sweep.LabelRole + "=" + sweep.RoleResult})
	if err != nil || len(cms.Items) != 4 {
		t.Fatalf("result configmaps: %v, %d; want 4", err, len(cms.Items))
	}

	t.Run("three cells per pod: two indexes give the same bytes", func(t *testing.T) {
		code, out, stderr := schedCtx(ctx, "sweep", "-f", study, "--on-cluster", "--image", "kubectl-sched:e2e", "-n", ns, "--name", "chunked", "--cells-per-pod", "3", "--wait=false", "--kubeconfig", c.Kubeconfig)
		if code != 0 || out != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
		if !strings.HasSuffix(stderr, "4 cells in 2 indexes; when the Job is done: kubectl sched sweep -f "+study+" --on-cluster --collect -n "+ns+" --name chunked\n") {
			t.Errorf("stderr %q", stderr)
		}
		job, err := c.Client.BatchV1().Jobs(ns).Get(ctx, "chunked", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *job.Spec.Completions != 2 {
			t.Fatalf("completions %d, want 2", *job.Spec.Completions)
		}
		for i := range 2 {
			if e := runJobPod(ctx, t, c, job, i); e != "" {
				t.Errorf("index %d: %s", i, e)
			}
		}
		code, out, stderr = schedCtx(ctx, "sweep", "-f", study, "--on-cluster", "--collect", "-n", ns, "--name", "chunked", "-o", "json", "--kubeconfig", c.Kubeconfig)
		if code != 0 || out != want["json"] {
			t.Errorf("--collect: exit %d, stderr %q; differs from the local sweep's", code, stderr)
		}
	})

	t.Run("a second sweep of the same name is refused, nothing created", func(t *testing.T) {
		before := sweepObjects(ctx, t, c.Client, ns)
		code, out, stderr := schedCtx(ctx, "sweep", "-f", study, "--on-cluster", "--image", "kubectl-sched:e2e", "-n", ns, "--kubeconfig", c.Kubeconfig)
		wantErr := "error: serviceaccount " + ns + "/sweep-study exists (an earlier sweep named sweep-study?): delete it (kubectl delete job,configmap,serviceaccount,role,rolebinding -n " + ns + " -l sweep.kubectl-sched.io/name=sweep-study) or give another --name\n"
		if code != 2 || out != "" || stderr != wantErr {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, %q", code, out, stderr, wantErr)
		}
		if after := sweepObjects(ctx, t, c.Client, ns); strings.Join(after, " ") != strings.Join(before, " ") {
			t.Errorf("objects changed:\n%v\n%v", before, after)
		}
	})

	t.Run("--resume after the Job is gone keeps the results there and runs the others", func(t *testing.T) {
		// Everything but the results goes, and one result too.
		sel := metav1.ListOptions{LabelSelector: sweep.LabelSweep + "=sweep-study," + sweep.LabelRole + "!=" + sweep.RoleResult}
		// As kubectl delete does: without a garbage collector here, the
		// orphaning default would leave the Job behind its finalizer.
		del := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
		if err := c.Client.BatchV1().Jobs(ns).DeleteCollection(ctx, del, sel); err != nil {
			t.Fatal(err)
		}
		if err := c.Client.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, del, sel); err != nil {
			t.Fatal(err)
		}
		if err := c.Client.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, del, sel); err != nil {
			t.Fatal(err)
		}
		if err := c.Client.RbacV1().Roles(ns).DeleteCollection(ctx, del, sel); err != nil {
			t.Fatal(err)
		}
		if err := c.Client.RbacV1().RoleBindings(ns).DeleteCollection(ctx, del, sel); err != nil {
			t.Fatal(err)
		}
		if err := c.Client.CoreV1().ConfigMaps(ns).Delete(ctx, "sweep-study-result-2", del); err != nil {
			t.Fatal(err)
		}
		kept := map[string]string{}
		for _, cm := range cms.Items {
			if cm.Name != "sweep-study-result-2" {
				kept[cm.Name] = string(cm.UID)
			}
		}
		code, out, stderr := schedCtx(ctx, "sweep", "-f", study, "--on-cluster", "--image", "kubectl-sched:e2e", "-n", ns, "--resume", "--wait=false", "--kubeconfig", c.Kubeconfig)
		if code != 0 || out != "" {
			t.Fatalf("--resume --wait=false: exit %d, stdout %q, stderr %q", code, out, stderr)
		}
		job, err := c.Client.BatchV1().Jobs(ns).Get(ctx, "sweep-study", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(*job.Spec.Completions) {
			if e := runJobPod(ctx, t, c, job, i); e != "" {
				t.Errorf("index %d: %s", i, e)
			}
		}
		after, err := c.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: sweep.LabelSweep + "=sweep-study," + sweep.LabelRole + "=" + sweep.RoleResult})
		if err != nil || len(after.Items) != 4 {
			t.Fatalf("result configmaps: %v, %d; want 4", err, len(after.Items))
		}
		for _, cm := range after.Items {
			if uid, ok := kept[cm.Name]; ok && uid != string(cm.UID) {
				t.Errorf("%s was written again", cm.Name)
			}
		}
		code, out, stderr = schedCtx(ctx, "sweep", "-f", study, "--on-cluster", "--collect", "-n", ns, "-o", "json", "--kubeconfig", c.Kubeconfig)
		if code != 0 || out != want["json"] {
			t.Errorf("--collect after --resume: exit %d, stderr %q; differs from the local sweep's", code, stderr)
		}
	})
}

// runJobPod does what the Job controller and the kubelet would for index
// i of job, and returns what went wrong ("" if nothing).
func runJobPod(ctx context.Context, t *testing.T, c *cluster.Cluster, job *batchv1.Job, i int) string {
	root := t.TempDir()
	spec := job.Spec.Template.Spec
	ctr := spec.Containers[0]
	mounts := map[string]string{} // volume name -> mount path
	for _, m := range ctr.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, vol := range spec.Volumes {
		dir := filepath.Join(root, mounts[vol.Name])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err.Error()
		}
		if vol.Projected == nil {
			continue // the results' emptyDir
		}
		for _, src := range vol.Projected.Sources {
			cm, err := c.Client.CoreV1().ConfigMaps(job.Namespace).Get(ctx, src.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			for _, it := range src.ConfigMap.Items {
				data, ok := cm.Data[it.Key]
				if !ok {
					data = string(cm.BinaryData[it.Key])
				}
				p := filepath.Join(dir, filepath.FromSlash(it.Path))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err.Error()
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					return err.Error()
				}
			}
		}
	}
	env := map[string]string{"JOB_COMPLETION_INDEX": itoa(i)}
	expand := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	var args []string
	for _, a := range ctr.Args {
		a = expand.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
		for _, mp := range mounts {
			if a == mp || strings.HasPrefix(a, mp+"/") {
				a = filepath.Join(root, a)
			}
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig", c.Kubeconfig, "--as", "system:serviceaccount:"+job.Namespace+":"+spec.ServiceAccountName)
	code, out, stderr := schedCtx(ctx, args...)
	if code != 0 || out != "" {
		return "kubectl-sched " + strings.Join(args, " ") + ": exit " + itoa(code) + ", stdout " + out + ", stderr " + stderr
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }

// sweepObjects lists the kind/name of every object of a sweep in ns.
func sweepObjects(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string) []string {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: sweep.LabelSweep}
	var out []string
	add := func(kind string, names ...string) {
		for _, n := range names {
			out = append(out, kind+"/"+n)
		}
	}
	jobs, err := client.BatchV1().Jobs(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		add("job", j.Name)
	}
	cms, err := client.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range cms.Items {
		add("configmap", x.Name)
	}
	sas, err := client.CoreV1().ServiceAccounts(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range sas.Items {
		add("serviceaccount", x.Name)
	}
	roles, err := client.RbacV1().Roles(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range roles.Items {
		add("role", x.Name)
	}
	rbs, err := client.RbacV1().RoleBindings(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rbs.Items {
		add("rolebinding", x.Name)
	}
	sort.Strings(out)
	return out
}

// TestSweepOnClusterBadInput: bad input is one line, exit status 2, and
// nothing is created; a create that fails midway (a quota refuses the
// ConfigMaps) takes back what was created before it; a Job that fails (its
// status written as the Job controller would) stops the wait, exit 1.
func TestSweepOnClusterBadInput(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, c.Client, "sweep-bad")
	study := copyExampleStudy(t)
	run := func(args ...string) (int, string, string) {
		return schedCtx(ctx, append([]string{"sweep", "-f", study, "--on-cluster", "--kubeconfig", c.Kubeconfig}, args...)...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no image", []string{"-n", ns}, "error: --on-cluster: --image is required: an image with kubectl-sched as its entrypoint (docs/operations.md)\n"},
		{"a namespace that does not exist", []string{"--image", "i", "-n", "no-such-ns"}, "error: namespace \"no-such-ns\" not found\n"},
		{"a namespace that cannot be one", []string{"--image", "i", "-n", "Bad_NS"}, "error: --namespace \"Bad_NS\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n"},
		{"a ServiceAccount that does not exist", []string{"--image", "i", "-n", ns, "--service-account", "nobody"}, "error: --service-account nobody: no such ServiceAccount in namespace " + ns + " (without the flag, the sweep makes one with the rights its pods need)\n"},
		{"a name that cannot be one", []string{"--image", "i", "-n", ns, "--name", "My.Sweep"}, ""},
		{"--resume does not go with --collect", []string{"-n", ns, "--collect", "--resume"}, "error: --resume goes with creating the Job (it keeps the results of an earlier one), not with --collect or --cell\n"},
		{"--collect before any result", []string{"--collect", "-n", ns}, "error: 4 of 4 cells have no result in namespace " + ns + " (configmaps -l sweep.kubectl-sched.io/name=sweep-study) (cell example_default_default_seed1 and 3 more): the Job's pods have not run them yet (kubectl get job sweep-study -n " + ns + ")\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := run(tc.args...)
			if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || (tc.want != "" && stderr != tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, %q", code, out, stderr, tc.want)
			}
			if got := sweepObjects(ctx, t, c.Client, ns); len(got) != 0 {
				t.Errorf("created %v", got)
			}
		})
	}

	t.Run("results of an earlier sweep are refused, and stale ones even with --resume", func(t *testing.T) {
		stale := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "sweep-study-result-0", Labels: sweep.Labels("sweep-study", sweep.RoleResult),
			Annotations: map[string]string{sweep.AnnotationCell: "example_default_default_seed1", sweep.AnnotationHash: "0123"},
		}, Data: map[string]string{"example_default_default_seed1.json": "{}"}}
		if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, stale, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Client.CoreV1().ConfigMaps(ns).Delete(ctx, stale.Name, metav1.DeleteOptions{}) }()
		for _, tc := range []struct {
			args []string
			want string
		}{
			{nil, "error: a result of an earlier sweep named sweep-study is in namespace " + ns + ": delete it (kubectl delete job,configmap,serviceaccount,role,rolebinding -n " + ns + " -l sweep.kubectl-sched.io/name=sweep-study) or give another --name; or --resume to keep them\n"},
			{[]string{"--resume"}, "error: configmap " + ns + "/sweep-study-result-0 was recorded for another definition of cell example_default_default_seed1 (the study or its inputs changed): it is not reused; delete it (kubectl delete configmap -n " + ns + " sweep-study-result-0)\n"},
		} {
			code, out, stderr := run(append([]string{"--image", "i", "-n", ns}, tc.args...)...)
			if code != 2 || out != "" || stderr != tc.want {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing, %q", tc.args, code, out, stderr, tc.want)
			}
			if got := sweepObjects(ctx, t, c.Client, ns); len(got) != 1 {
				t.Errorf("%v: created %v", tc.args, got)
			}
		}
	})

	t.Run("a server dry run creates nothing", func(t *testing.T) {
		code, out, stderr := run("--image", "i", "-n", ns, "--dry-run=server")
		if code != 0 || out != "" || !strings.Contains(stderr, "job.batch/sweep-study created (server dry run)\n") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
		if got := sweepObjects(ctx, t, c.Client, ns); len(got) != 0 {
			t.Errorf("created %v", got)
		}
	})

	t.Run("a Job that fails stops the wait, naming its failed indexes", func(t *testing.T) {
		done := make(chan [3]string, 1)
		go func() {
			code, out, stderr := run("--image", "i", "-n", ns, "--name", "failing")
			done <- [3]string{itoa(code), out, stderr}
		}()
		var job *batchv1.Job
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			j, err := c.Client.BatchV1().Jobs(ns).Get(ctx, "failing", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			job = j
			return err == nil, err
		})
		if err != nil {
			t.Fatalf("waiting for the Job: %v", err)
		}
		// What the Job controller writes when index 1 runs out of retries.
		now := metav1.Now()
		job.Status = batchv1.JobStatus{
			StartTime: &now, FailedIndexes: ptr.To("1"), Failed: 3,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: v1.ConditionTrue, Reason: batchv1.JobReasonFailedIndexes, Message: "Job has failed indexes", LastTransitionTime: now, LastProbeTime: now},
				{Type: batchv1.JobFailed, Status: v1.ConditionTrue, Reason: batchv1.JobReasonFailedIndexes, Message: "Job has failed indexes", LastTransitionTime: now, LastProbeTime: now},
			},
		}
		if _, err := c.Client.BatchV1().Jobs(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		var r [3]string
		select {
		case r = <-done:
		case <-ctx.Done():
			t.Fatal("the sweep did not notice the failed Job")
		}
		want := "error: the sweep's Job failed: job " + ns + "/failing: FailedIndexes: Job has failed indexes (failed indexes: 1; kubectl logs -n " + ns + " -l batch.kubernetes.io/job-name=failing)\n"
		if r[0] != "1" || r[1] != "" || !strings.HasSuffix(r[2], want) {
			t.Errorf("exit %s, stdout %q, stderr %q; want 1 and ending %q", r[0], r[1], r[2], want)
		}
		sel := metav1.ListOptions{LabelSelector: sweep.LabelSweep + "=failing"}
		bg := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
		_ = c.Client.BatchV1().Jobs(ns).DeleteCollection(ctx, bg, sel)
		_ = c.Client.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, bg, sel)
		_ = c.Client.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, bg, sel)
		_ = c.Client.RbacV1().Roles(ns).DeleteCollection(ctx, bg, sel)
		_ = c.Client.RbacV1().RoleBindings(ns).DeleteCollection(ctx, bg, sel)
	})

	t.Run("a create refused midway takes back the ones before it", func(t *testing.T) {
		quota, err := c.Client.CoreV1().ResourceQuotas(ns).Create(ctx, &v1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "no-configmaps"},
			Spec:       v1.ResourceQuotaSpec{Hard: v1.ResourceList{"count/configmaps": resource.MustParse("0")}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The status a quota controller would keep (none runs here).
		quota.Status = v1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: v1.ResourceList{"count/configmaps": resource.MustParse("0")}}
		if _, err := c.Client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, quota, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := run("--image", "i", "-n", ns)
		if code != 1 || out != "" || !strings.HasPrefix(stderr, "error: creating configmap "+ns+"/sweep-study-study-0: ") || !strings.Contains(stderr, "exceeded quota") ||
			!strings.HasSuffix(stderr, " (the 3 objects created before it are deleted)\n") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("exit %d, stdout %q, stderr %q; want 1 and the refused create", code, out, stderr)
		}
		if got := sweepObjects(ctx, t, c.Client, ns); len(got) != 0 {
			t.Errorf("left behind: %v", got)
		}
	})
}
