package sweep

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

// ResultConfigMap is the ConfigMap that keeps a cell's result file (as
// written in the results directory) on the cluster: under the key
// <id>.json, or gzipped under <id>.json.gz when the file is larger than a
// ConfigMap holds. A result too large even so is an error that says to
// record less.
func ResultConfigMap(name, namespace string, c Cell, file []byte) (*v1.ConfigMap, error) {
	cm := &v1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ResultConfigMapName(name, c), Namespace: namespace,
			Labels:      Labels(name, RoleResult),
			Annotations: map[string]string{AnnotationCell: c.ID, AnnotationHash: c.Hash},
		},
	}
	if len(file) <= configMapBudget {
		cm.Data = map[string]string{c.ID + ".json": string(file)}
		return cm, nil
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = w.Write(file)
	_ = w.Close()
	if gz.Len() > configMapBudget {
		return nil, fmt.Errorf("cell %s: its result is %d bytes, %d gzipped: a ConfigMap holds at most 1 MiB; record less (record: [summary]) or shorten the replay (until)", c.ID, len(file), gz.Len())
	}
	cm.BinaryData = map[string][]byte{c.ID + ".json.gz": gz.Bytes()}
	return cm, nil
}

// resultFromConfigMap decodes a result ConfigMap's file.
func resultFromConfigMap(cm *v1.ConfigMap, c Cell) (*CellResult, error) {
	file := []byte(cm.Data[c.ID+".json"])
	if gz, ok := cm.BinaryData[c.ID+".json.gz"]; ok {
		r, err := gzip.NewReader(bytes.NewReader(gz))
		if err == nil {
			file, err = io.ReadAll(r)
		}
		if err != nil {
			return nil, inputErrorf("cell %s: configmap %s/%s: %v", c.ID, cm.Namespace, cm.Name, err)
		}
	}
	var r CellResult
	if err := json.Unmarshal(file, &r); err != nil || r.ID != c.ID {
		if err == nil {
			err = fmt.Errorf("it holds cell %q", r.ID)
		}
		return nil, inputErrorf("cell %s: configmap %s/%s is not this cell's result: %v", c.ID, cm.Namespace, cm.Name, err)
	}
	return &r, nil
}

// RunToCluster is what a pod of the sweep's Job does: it runs the cells
// of only (its index's) into dir, then puts each result in its ConfigMap
// in namespace. A cell whose ConfigMap is there already with the same hash
// (a retried pod whose first attempt wrote it) is not run again; one with
// another hash is stale, bad input.
func (p *Plan) RunToCluster(ctx context.Context, client kubernetes.Interface, namespace, name string, o RunOptions) error {
	cms := client.CoreV1().ConfigMaps(namespace)
	var todo []int
	for _, i := range o.Only {
		if i < 0 || i >= len(p.Cells) {
			return inputErrorf("--cell %d: the study has %d cells (0 to %d)", i, len(p.Cells), len(p.Cells)-1)
		}
		c := p.Cells[i]
		cm, err := cms.Get(ctx, ResultConfigMapName(name, c), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			todo = append(todo, i)
		case err != nil:
			return fmt.Errorf("cell %s: reading configmap %s/%s: %w", c.ID, namespace, ResultConfigMapName(name, c), err)
		case cm.Annotations[AnnotationHash] != c.Hash:
			return inputErrorf("cell %s: configmap %s/%s was recorded for another definition of this cell (the study or its inputs changed)", c.ID, namespace, cm.Name)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	o.Only = todo
	o.Resume = true // dir is the pod's own: what is there is this cell's
	if _, err := p.Run(ctx, o); err != nil {
		return err
	}
	for _, i := range todo {
		c := p.Cells[i]
		file, err := os.ReadFile(ResultPath(o.Dir, c))
		if err != nil {
			return err
		}
		cm, err := ResultConfigMap(name, namespace, c, file)
		if err != nil {
			return err
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue // another attempt of this index wrote it; its hash was the same above
			}
			return fmt.Errorf("cell %s: creating configmap %s/%s: %w", c.ID, namespace, cm.Name, err)
		}
	}
	return nil
}

// resultConfigMaps lists a sweep's result ConfigMaps by cell id.
func resultConfigMaps(ctx context.Context, client kubernetes.Interface, namespace, name string) (map[string]*v1.ConfigMap, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelSweep: name, LabelRole: RoleResult}).String()
	out := map[string]*v1.ConfigMap{}
	opts := metav1.ListOptions{LabelSelector: sel, Limit: 100}
	for {
		list, err := client.CoreV1().ConfigMaps(namespace).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the results (configmaps -l %s in %s): %w", sel, namespace, err)
		}
		for i := range list.Items {
			cm := &list.Items[i]
			out[cm.Annotations[AnnotationCell]] = cm
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// resultIDs lists the cell ids of a sweep's results, by their metadata
// when meta is set.
func resultIDs(ctx context.Context, client kubernetes.Interface, meta metadata.Interface, namespace, name string) (map[string]bool, error) {
	out := map[string]bool{}
	if meta == nil {
		cms, err := resultConfigMaps(ctx, client, namespace, name)
		for id := range cms {
			out[id] = true
		}
		return out, err
	}
	sel := labels.SelectorFromSet(labels.Set{LabelSweep: name, LabelRole: RoleResult}).String()
	opts := metav1.ListOptions{LabelSelector: sel, Limit: 500}
	res := meta.Resource(v1.SchemeGroupVersion.WithResource("configmaps")).Namespace(namespace)
	for {
		list, err := res.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the results (configmaps -l %s in %s): %w", sel, namespace, err)
		}
		for _, item := range list.Items {
			out[item.Annotations[AnnotationCell]] = true
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// Collect merges the results the pods of the sweep name put in
// namespace, as Merge does from a directory.
func (p *Plan) Collect(ctx context.Context, client kubernetes.Interface, namespace, name string) (*Merged, error) {
	cms, err := resultConfigMaps(ctx, client, namespace, name)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("namespace %s (configmaps -l %s=%s)", namespace, LabelSweep, name)
	return p.mergeFrom(func(c Cell) (*CellResult, string, error) {
		cm, ok := cms[c.ID]
		if !ok {
			return nil, "", fs.ErrNotExist
		}
		place := fmt.Sprintf("configmap %s/%s", namespace, cm.Name)
		r, err := resultFromConfigMap(cm, c)
		return r, place, err
	}, where, fmt.Sprintf("the Job's pods have not run them yet (kubectl get job %s -n %s)", name, namespace))
}

// ErrJobFailed is a sweep's Job that failed: some index ran out of
// retries.
var ErrJobFailed = errors.New("the sweep's Job failed")

// Wait waits until every cell has its result ConfigMap, polling every
// interval, or the Job fails. progress, when set, is told the cells done.
// meta, when set, lists the results' metadata only: a poll of a study of
// a thousand cells does not download every result.
func (p *Plan) Wait(ctx context.Context, client kubernetes.Interface, meta metadata.Interface, namespace, name string, interval time.Duration, progress func(done, total int)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		cms, err := resultIDs(ctx, client, meta, namespace, name)
		if err != nil {
			return err
		}
		done := 0
		for _, c := range p.Cells {
			if _, ok := cms[c.ID]; ok {
				done++
			}
		}
		if progress != nil {
			progress(done, len(p.Cells))
		}
		if done == len(p.Cells) {
			return nil
		}
		job, err := client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading job %s/%s: %w", namespace, name, err)
		}
		for _, cond := range job.Status.Conditions {
			if cond.Type == "Failed" && cond.Status == v1.ConditionTrue {
				return fmt.Errorf("%w: job %s/%s: %s: %s (failed indexes: %s; kubectl logs -n %s -l batch.kubernetes.io/job-name=%s)", ErrJobFailed, namespace, name, cond.Reason, cond.Message, ptrString(job.Status.FailedIndexes), namespace, name)
			}
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

func ptrString(s *string) string {
	if s == nil || *s == "" {
		return "none"
	}
	return *s
}

// Preflight checks, before anything is created, that the objects can be:
// the namespace exists, none of the objects does, and no result of an
// earlier sweep of the same name is there — unless resume, which keeps
// the results recorded for this plan's cells (the pods of their indexes
// find them and run nothing) and refuses stale ones. Its errors are bad
// input.
func (p *Plan) Preflight(ctx context.Context, client kubernetes.Interface, objs *ClusterObjects, resume bool) error {
	job := objs.Job
	ns, name := job.Namespace, job.Name
	if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return inputErrorf("namespace %q not found", ns)
	} else if err != nil && !apierrors.IsForbidden(err) { // may not read namespaces: the creates will tell
		return fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	if sa := job.Spec.Template.Spec.ServiceAccountName; objs.ServiceAccount == nil {
		if _, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, sa, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return inputErrorf("--service-account %s: no such ServiceAccount in namespace %s (without the flag, the sweep makes one with the rights its pods need)", sa, ns)
		} else if err != nil && !apierrors.IsForbidden(err) {
			return fmt.Errorf("reading serviceaccount %s/%s: %w", ns, sa, err)
		}
	}
	cleanup := fmt.Sprintf("delete it (kubectl delete job,configmap,serviceaccount,role,rolebinding -n %s -l %s=%s) or give another --name", ns, LabelSweep, name)
	for _, obj := range objs.List() {
		kind, oname := kindName(obj)
		var err error
		switch kind {
		case "Job":
			_, err = client.BatchV1().Jobs(ns).Get(ctx, oname, metav1.GetOptions{})
		case "ConfigMap":
			_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, oname, metav1.GetOptions{})
		case "ServiceAccount":
			_, err = client.CoreV1().ServiceAccounts(ns).Get(ctx, oname, metav1.GetOptions{})
		case "Role":
			_, err = client.RbacV1().Roles(ns).Get(ctx, oname, metav1.GetOptions{})
		case "RoleBinding":
			_, err = client.RbacV1().RoleBindings(ns).Get(ctx, oname, metav1.GetOptions{})
		}
		switch {
		case err == nil:
			return inputErrorf("%s %s/%s exists (an earlier sweep named %s?): %s", lower(kind), ns, oname, name, cleanup)
		case apierrors.IsNotFound(err):
		default:
			return fmt.Errorf("reading %s %s/%s: %w", lower(kind), ns, oname, err)
		}
	}
	cms, err := resultConfigMaps(ctx, client, ns, name)
	if err != nil {
		return err
	}
	if len(cms) > 0 && !resume {
		what := fmt.Sprintf("%d results of an earlier sweep named %s are", len(cms), name)
		if len(cms) == 1 {
			what = fmt.Sprintf("a result of an earlier sweep named %s is", name)
		}
		return inputErrorf("%s in namespace %s: %s; or --resume to keep them", what, ns, cleanup)
	}
	hashes := map[string]string{}
	for _, c := range p.Cells {
		hashes[c.ID] = c.Hash
	}
	ids := make([]string, 0, len(cms))
	for id := range cms {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if cm := cms[id]; cm.Annotations[AnnotationHash] != hashes[id] {
			return inputErrorf("configmap %s/%s was recorded for another definition of cell %s (the study or its inputs changed): it is not reused; delete it (kubectl delete configmap -n %s %s)", ns, cm.Name, id, ns, cm.Name)
		}
	}
	return nil
}

// Create creates the objects in order; when one fails, it deletes those it
// created and returns the error. dryRun sends every request as a server
// dry run (nothing is persisted). When all are, it reports each one to
// created.
func Create(ctx context.Context, client kubernetes.Interface, objs *ClusterObjects, dryRun bool, created func(kind, name string)) error {
	opts := metav1.CreateOptions{FieldManager: "kubectl-sched"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var undo []func() error
	var done [][2]string
	rollback := func(err error) error {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			if e := undo[i](); e != nil && !apierrors.IsNotFound(e) {
				errs = append(errs, e)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%w (and deleting the %d objects created before it: %v)", err, len(undo), errors.Join(errs...))
		}
		if len(undo) > 0 {
			return fmt.Errorf("%w (the %d objects created before it are deleted)", err, len(undo))
		}
		return err
	}
	del := metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationBackground)}
	ns := objs.Job.Namespace
	for _, obj := range objs.List() {
		kind, name := kindName(obj)
		var err error
		var remove func() error
		switch o := obj.(type) {
		case *v1.ServiceAccount:
			_, err = client.CoreV1().ServiceAccounts(ns).Create(ctx, o, opts)
			remove = func() error { return client.CoreV1().ServiceAccounts(ns).Delete(context.WithoutCancel(ctx), name, del) }
		case *v1.ConfigMap:
			_, err = client.CoreV1().ConfigMaps(ns).Create(ctx, o, opts)
			remove = func() error { return client.CoreV1().ConfigMaps(ns).Delete(context.WithoutCancel(ctx), name, del) }
		case *rbacv1.Role:
			_, err = client.RbacV1().Roles(ns).Create(ctx, o, opts)
			remove = func() error { return client.RbacV1().Roles(ns).Delete(context.WithoutCancel(ctx), name, del) }
		case *rbacv1.RoleBinding:
			_, err = client.RbacV1().RoleBindings(ns).Create(ctx, o, opts)
			remove = func() error { return client.RbacV1().RoleBindings(ns).Delete(context.WithoutCancel(ctx), name, del) }
		case *batchv1.Job:
			_, err = client.BatchV1().Jobs(ns).Create(ctx, o, opts)
			remove = func() error { return client.BatchV1().Jobs(ns).Delete(context.WithoutCancel(ctx), name, del) }
		}
		if err != nil {
			return rollback(fmt.Errorf("creating %s %s/%s: %w", lower(kind), ns, name, err))
		}
		if !dryRun {
			undo = append(undo, remove)
		}
		done = append(done, [2]string{kind, name})
	}
	if created != nil {
		for _, d := range done {
			created(d[0], d[1])
		}
	}
	return nil
}

func kindName(obj runtime.Object) (string, string) {
	m, _ := obj.(metav1.Object)
	return obj.GetObjectKind().GroupVersionKind().Kind, m.GetName()
}

func lower(kind string) string { return string(bytes.ToLower([]byte(kind))) }

func ptrTo[T any](v T) *T { return &v }
