package capacity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

func loadSpec(t *testing.T, content string, cl *snapshot.Cluster) ([]*Spec, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadSpecs([]string{path}, nil, "team", cl)
}

const container = `containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]`

func TestLoadSpecsBuildsPodsAsControllersDo(t *testing.T) {
	existingRS := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "team",
		Labels:          map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "abc"},
		Annotations:     map[string]string{"deployment.kubernetes.io/revision": "2"},
		OwnerReferences: []metav1.OwnerReference{owner("apps/v1", KindDeployment, "web", "")}}}
	olderRS := existingRS.DeepCopy()
	olderRS.Name, olderRS.Labels[appsv1.DefaultDeploymentUniqueLabelKey], olderRS.Annotations["deployment.kubernetes.io/revision"] = "web-old", "old", "1"
	tests := []struct {
		name    string
		spec    string
		cluster *snapshot.Cluster
		check   func(t *testing.T, s *Spec)
	}{
		{
			name: "a running pod's dump is a spec: its node and status go",
			spec: "apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: u1, labels: {app: a}}\nspec: {nodeName: n1, " + container + "}\nstatus: {phase: Running}\n",
			check: func(t *testing.T, s *Spec) {
				if s.Name != "team/p" || s.Kind != KindPod || s.Pod.Spec.NodeName != "" || s.Pod.UID != "" || s.Pod.Labels["app"] != "a" || s.Pod.Spec.SchedulerName != v1.DefaultSchedulerName {
					t.Errorf("spec = %+v", s.Pod)
				}
			},
		},
		{
			name: "a new Deployment's pods belong to the ReplicaSet its controller would create",
			spec: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {" + container + "}\n",
			check: func(t *testing.T, s *Spec) {
				hash := s.Pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
				if hash == "" || s.ReplicaSet == nil || s.ReplicaSet.Name != "web-"+hash || s.Pod.OwnerReferences[0].Name != "web-"+hash ||
					s.ReplicaSet.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash || s.ReplicaSet.Spec.Selector.MatchLabels["app"] != "web" {
					t.Errorf("pod labels %v, owner %v, replica set %+v", s.Pod.Labels, s.Pod.OwnerReferences, s.ReplicaSet)
				}
			},
		},
		{
			name:    "an existing Deployment's pods belong to its newest ReplicaSet",
			spec:    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {" + container + "}\n",
			cluster: &snapshot.Cluster{ReplicaSets: []*appsv1.ReplicaSet{olderRS, existingRS}},
			check: func(t *testing.T, s *Spec) {
				if s.ReplicaSet != nil || s.Pod.OwnerReferences[0].Name != "web-abc" || s.Pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != "abc" {
					t.Errorf("owner %v, labels %v, replica set %v", s.Pod.OwnerReferences, s.Pod.Labels, s.ReplicaSet)
				}
			},
		},
		{
			name: "a StatefulSet brings its claim templates",
			spec: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  selector: {matchLabels: {app: db}}\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]\n  template:\n    metadata: {labels: {app: db}}\n    spec: {" + container + "}\n",
			check: func(t *testing.T, s *Spec) {
				if s.Kind != KindStatefulSet || s.StatefulSet == nil || len(s.ClaimTemplates) != 1 || s.Pod.OwnerReferences[0].Kind != KindStatefulSet {
					t.Errorf("spec = %+v", s)
				}
			},
		},
		{
			name: "a Job's pods carry the Job's labels",
			spec: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: etl}\nspec:\n  template:\n    spec: {restartPolicy: Never, " + container + "}\n",
			check: func(t *testing.T, s *Spec) {
				if s.Pod.Labels["batch.kubernetes.io/job-name"] != "etl" || s.Pod.Labels["job-name"] != "etl" || s.Pod.OwnerReferences[0].Kind != KindJob {
					t.Errorf("labels %v owners %v", s.Pod.Labels, s.Pod.OwnerReferences)
				}
			},
		},
		{
			name: "a DaemonSet",
			spec: "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: kube-system}\nspec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {" + container + "}\n",
			check: func(t *testing.T, s *Spec) {
				if s.Name != "kube-system/agent" || s.DaemonSet == nil {
					t.Errorf("spec = %+v", s)
				}
			},
		},
		{
			name: "a gang: a PodGroup after its pods, each pod a member",
			spec: "apiVersion: v1\nkind: Pod\nmetadata: {name: w0, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec: {" + container + "}\n---\n" +
				"apiVersion: v1\nkind: Pod\nmetadata: {name: w1, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec: {" + container + "}\n---\n" +
				"apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 2}\n",
			check: func(t *testing.T, s *Spec) {
				if s.Kind != KindPodGroup || s.Name != "team/g" || s.Gang == nil || len(s.Gang.Members) != 2 || s.Gang.Native {
					t.Errorf("spec = %+v", s)
				}
			},
		},
		{
			name: "a native gang from a Deployment's replicas",
			spec: "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: 3}}}\n---\n" +
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    spec: {schedulingGroup: {podGroupName: g}, " + container + "}\n",
			check: func(t *testing.T, s *Spec) {
				if s.Gang == nil || !s.Gang.Native || len(s.Gang.Members) != 3 {
					t.Errorf("spec = %+v", s)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specs, err := loadSpec(t, tc.spec, tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			if len(specs) != 1 {
				t.Fatalf("%d specs", len(specs))
			}
			tc.check(t, specs[0])
		})
	}
}

func TestLoadSpecsRejectsWhatIsNotASpec(t *testing.T) {
	tests := []struct {
		name, spec, want string
		invalid          bool
	}{
		{"a ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "ConfigMap c: not a pod, a pod template or a gang: kind v1/ConfigMap", true},
		{"a CronJob", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\n", "kind batch/v1/CronJob", true},
		{"a pod without containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n", "Pod p: not a pod, a pod template or a gang: spec.containers: required", true},
		{"a member without its PodGroup", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec: {" + container + "}\n", "Pod team/p names PodGroup team/g, which is not among the specs", false},
		{"a PodGroup without members", "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n", "PodGroup team/g: no pods of the group among the specs", false},
		{"a PodGroup given twice", "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n", "PodGroup given twice", true},
		{"an empty file", "# nothing\n", "no objects", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadSpec(t, tc.spec, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
			if !errors.Is(err, ErrNotASpec) && !errors.Is(err, snapshot.ErrInvalid) {
				t.Errorf("error %v is neither ErrNotASpec nor ErrInvalid", err)
			}
			if tc.invalid && !errors.Is(err, snapshot.ErrInvalid) {
				t.Errorf("error %v does not name its file and line (ErrInvalid)", err)
			}
		})
	}
}

func TestTemplateNodes(t *testing.T) {
	tmpl := zoneNode("m6i", "b", "8")
	existing := []*v1.Node{zoneNode("m6i-2", "a", "4")}
	var names []string
	for _, n := range TemplateNodes(tmpl, 3, existing) {
		if n.Labels[v1.LabelHostname] != n.Name || n.Labels[v1.LabelTopologyZone] != "b" || n.Status.Capacity.Cpu().String() != "8" {
			t.Errorf("node %s: labels %v capacity %v", n.Name, n.Labels, n.Status.Capacity)
		}
		names = append(names, n.Name)
	}
	if d := cmp.Diff([]string{"m6i-added-1", "m6i-added-2", "m6i-added-3"}, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if tmpl.Name != "m6i" || tmpl.Labels[v1.LabelHostname] != "m6i" {
		t.Error("the template was modified")
	}
}

func TestLoadSpecsResolvesPriorityClasses(t *testing.T) {
	never := v1.PreemptNever
	classes := []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, PreemptionPolicy: &never},
		{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Value: 10, GlobalDefault: true},
	}
	pod := func(class string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: '" + class + "', " + container + "}\n"
	}
	tests := []struct {
		name, spec string
		priority   int32
		policy     v1.PreemptionPolicy
		warning    string
	}{
		{name: "a class of the cluster gives its value and policy", spec: pod("high"), priority: 1000, policy: v1.PreemptNever},
		{name: "no class takes the globalDefault class", spec: pod(""), priority: 10},
		{name: "a system class the dump lacks", spec: pod("system-node-critical"), priority: 2000001000},
		{name: "a class the cluster lacks is a warning and priority 0", spec: pod("missing"), warning: `priorityClassName "missing" is not a PriorityClass of the dump`},
		{name: "a Deployment's template gets its class too", spec: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {priorityClassName: high, " + container + "}\n", priority: 1000, policy: v1.PreemptNever},
		{name: "spec.priority set is kept", spec: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: 5, priorityClassName: high, " + container + "}\n", priority: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := &snapshot.Cluster{PriorityClasses: classes}
			specs, err := loadSpec(t, tc.spec, cl)
			if err != nil {
				t.Fatal(err)
			}
			p := specs[0].Pod
			if got := ptrValue(p.Spec.Priority); got != tc.priority {
				t.Errorf("priority = %d, want %d", got, tc.priority)
			}
			if tc.policy != "" && (p.Spec.PreemptionPolicy == nil || *p.Spec.PreemptionPolicy != tc.policy) {
				t.Errorf("preemptionPolicy = %v, want %s", p.Spec.PreemptionPolicy, tc.policy)
			}
			if got := strings.Join(cl.Warnings, "\n"); tc.warning == "" && got != "" || !strings.Contains(got, tc.warning) {
				t.Errorf("warnings = %q, want %q", got, tc.warning)
			}
		})
	}
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
