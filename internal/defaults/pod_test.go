package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// ignoreTolerations leaves out the tolerations, which TestTolerations
// covers.
var ignoreTolerations = cmpopts.IgnoreFields(v1.PodSpec{}, "Tolerations")

// quantities compares quantities by value, as kube's tests do (Cmp).
var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func podSpec(t *testing.T, y string) v1.PodSpec {
	t.Helper()
	var s v1.PodSpec
	if err := yaml.UnmarshalStrict([]byte(y), &s); err != nil {
		t.Fatalf("bad spec: %v\n%s", err, y)
	}
	return s
}

// TestPod transcribes kube v1.37.2's scenarios: pkg/apis/core/v1
// defaults_test.go (TestSetDefaultRequestsPod, TestSetMinimumScalePod,
// TestSetDefaultPodSpecHostNetwork, TestPodHostNetworkDefaults,
// TestSetDefaultSchedulerName, TestPodResourcesDefaults) and
// pkg/registry/core/pod strategy_test.go (TestApplyPodLevelResourceDefaults,
// requests only: pod-level limits are left as written). The fields the
// defaulting sets that no decision reads (dnsPolicy, securityContext,
// terminationMessagePath, ...) are not set.
func TestPod(t *testing.T) {
	tests := []struct {
		name       string
		spec, want string
	}{{
		name: "requests default to limits in containers and init containers, an explicit zero request kept",
		spec: `
containers: [{name: c, resources: {requests: {memory: "0"}, limits: {cpu: 100m, memory: 1Gi}}}]
initContainers: [{name: i, resources: {requests: {memory: "0"}, limits: {cpu: 100m, memory: 1Gi}}}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c, resources: {requests: {cpu: 100m, memory: "0"}, limits: {cpu: 100m, memory: 1Gi}}}]
initContainers: [{name: i, resources: {requests: {cpu: 100m, memory: "0"}, limits: {cpu: 100m, memory: 1Gi}}}]`,
	}, {
		name: "a sidecar's requests default to its limits too",
		spec: `
containers: [{name: c}]
initContainers: [{name: s, restartPolicy: Always, resources: {limits: {cpu: "1", memory: 2Gi}}}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c}]
initContainers: [{name: s, restartPolicy: Always, resources: {requests: {cpu: "1", memory: 2Gi}, limits: {cpu: "1", memory: 2Gi}}}]`,
	}, {
		name: "without limits requests stay unset",
		spec: `
containers: [{name: c}]
initContainers: [{name: i}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c}]
initContainers: [{name: i}]`,
	}, {
		name: "quantities round up to milli scale",
		spec: `
containers: [{name: c, resources: {requests: {memory: 1n}, limits: {cpu: 2n}}}]
initContainers: [{name: i, resources: {requests: {memory: 1n}, limits: {cpu: 2n}}}]
overhead: {cpu: 1n}`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c, resources: {requests: {memory: 1m, cpu: 1m}, limits: {cpu: 1m}}}]
initContainers: [{name: i, resources: {requests: {memory: 1m, cpu: 1m}, limits: {cpu: 1m}}}]
overhead: {cpu: 1m}`,
	}, {
		name: "a hostNetwork pod's container and init container ports get hostPort = containerPort and protocol TCP",
		spec: `
hostNetwork: true
containers: [{name: c, ports: [{containerPort: 8080}]}]
initContainers: [{name: i, ports: [{containerPort: 8080}]}]`,
		want: `
hostNetwork: true
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c, ports: [{containerPort: 8080, hostPort: 8080, protocol: TCP}]}]
initContainers: [{name: i, ports: [{containerPort: 8080, hostPort: 8080, protocol: TCP}]}]`,
	}, {
		name: "without hostNetwork a port gets no hostPort",
		spec: `
containers: [{name: c, ports: [{containerPort: 12345, protocol: TCP}]}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c, ports: [{containerPort: 12345, protocol: TCP}]}]`,
	}, {
		name: "a hostPort given is kept, a UDP port stays UDP",
		spec: `
hostNetwork: true
containers: [{name: c, ports: [{containerPort: 53, hostPort: 53, protocol: UDP}, {containerPort: 9000}]}]`,
		want: `
hostNetwork: true
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c, ports: [{containerPort: 53, hostPort: 53, protocol: UDP}, {containerPort: 9000, hostPort: 9000, protocol: TCP}]}]`,
	}, {
		name: "a schedulerName and restartPolicy given are kept",
		spec: `
schedulerName: other
restartPolicy: Never
containers: [{name: c}]`,
		want: `
schedulerName: other
restartPolicy: Never
containers: [{name: c}]`,
	}, {
		name: "pod-level requests default to pod-level limits when containers have none",
		spec: `
resources: {limits: {cpu: 2m, memory: 1Mi}}
containers: [{name: c}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
resources: {requests: {cpu: 2m, memory: 1Mi}, limits: {cpu: 2m, memory: 1Mi}}
containers: [{name: c}]`,
	}, {
		name: "pod-level requests default to the containers' (defaulted) requests, hugepages to their limits",
		spec: `
resources: {limits: {cpu: 5m}}
containers:
- {name: a, resources: {limits: {cpu: 2m, hugepages-2Mi: 4Mi}}}
- {name: b, resources: {limits: {cpu: 1m, hugepages-2Mi: 2Mi}}}`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
resources: {requests: {cpu: 3m, hugepages-2Mi: 6Mi}, limits: {cpu: 5m, hugepages-2Mi: 6Mi}}
containers:
- {name: a, resources: {requests: {cpu: 2m, hugepages-2Mi: 4Mi}, limits: {cpu: 2m, hugepages-2Mi: 4Mi}}}
- {name: b, resources: {requests: {cpu: 1m, hugepages-2Mi: 2Mi}, limits: {cpu: 1m, hugepages-2Mi: 2Mi}}}`,
	}, {
		name: "memory request set, container limits set for CPU",
		spec: `
resources: {requests: {memory: 256Mi}}
containers:
- {name: c1, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 100m}}}
- {name: c2, resources: {requests: {cpu: 200m, memory: 128Mi}, limits: {cpu: 200m}}}`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
resources: {requests: {cpu: 300m, memory: 256Mi}}
containers:
- {name: c1, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 100m}}}
- {name: c2, resources: {requests: {cpu: 200m, memory: 128Mi}, limits: {cpu: 200m}}}`,
	}, {
		name: "memory request set, containers have CPU requests (5m, 6m) and limits (9m, 10m)",
		spec: `
resources: {requests: {memory: 256Mi}}
containers:
- {name: c1, resources: {requests: {cpu: 5m}, limits: {cpu: 9m}}}
- {name: c2, resources: {requests: {cpu: 6m}, limits: {cpu: 10m}}}`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
resources: {requests: {cpu: 11m, memory: 256Mi}}
containers:
- {name: c1, resources: {requests: {cpu: 5m}, limits: {cpu: 9m}}}
- {name: c2, resources: {requests: {cpu: 6m}, limits: {cpu: 10m}}}`,
	}, {
		name: "pod requests defaulted from container requests when limits set",
		spec: `
resources: {limits: {cpu: 500m, memory: 512Mi}}
containers: [{name: c1, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 200m, memory: 256Mi}}}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 500m, memory: 512Mi}}
containers: [{name: c1, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 200m, memory: 256Mi}}}]`,
	}, {
		name: "unsupported resources are not pod-level",
		spec: `
resources: {requests: {example.com/gpu: "1"}}
containers: [{name: c1, resources: {requests: {example.com/gpu: "1"}, limits: {example.com/gpu: "1"}}}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
resources: {requests: {example.com/gpu: "1"}}
containers: [{name: c1, resources: {requests: {example.com/gpu: "1"}, limits: {example.com/gpu: "1"}}}]`,
	}, {
		name: "empty pod-level resources stay empty",
		spec: `
resources: {}
containers: [{name: c1, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 200m, memory: 256Mi}}}]`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
resources: {}
containers: [{name: c1, resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 200m, memory: 256Mi}}}]`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1.Pod{Spec: podSpec(t, tc.spec)}
			Pod(p)
			if diff := cmp.Diff(podSpec(t, tc.want), p.Spec, quantities, ignoreTolerations); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			again := p.DeepCopy()
			Pod(again)
			if diff := cmp.Diff(p.Spec, again.Spec); diff != "" {
				t.Errorf("defaulting twice changes the spec (-once +twice):\n%s", diff)
			}
		})
	}
}

// TestPodAffinityLabelKeys transcribes pkg/registry/core/pod
// strategy_test.go's matchLabelKeys / mismatchLabelKeys cases of
// mutatePodAffinity: the pod's values merged into each term's selector.
func TestPodAffinityLabelKeys(t *testing.T) {
	tests := []struct {
		name       string
		spec, want string
	}{{
		name: "matchLabelKeys and mismatchLabelKeys become In and NotIn requirements",
		spec: `
containers: [{name: c}]
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - {topologyKey: zone, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [version], mismatchLabelKeys: [tenant]}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 10
      podAffinityTerm: {topologyKey: host, labelSelector: {}, matchLabelKeys: [version, absent]}`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c}]
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: zone
      labelSelector:
        matchLabels: {app: web}
        matchExpressions: [{key: version, operator: In, values: [v2]}, {key: tenant, operator: NotIn, values: [a]}]
      matchLabelKeys: [version]
      mismatchLabelKeys: [tenant]
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 10
      podAffinityTerm:
        topologyKey: host
        labelSelector: {matchExpressions: [{key: version, operator: In, values: [v2]}]}
        matchLabelKeys: [version, absent]`,
	}, {
		name: "a nil labelSelector matches nothing and stays nil",
		spec: `
containers: [{name: c}]
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - {topologyKey: zone, matchLabelKeys: [version]}`,
		want: `
restartPolicy: Always
schedulerName: default-scheduler
containers: [{name: c}]
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - {topologyKey: zone, matchLabelKeys: [version]}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1.Pod{Spec: podSpec(t, tc.spec)}
			p.Labels = map[string]string{"version": "v2", "tenant": "a"}
			Pod(p)
			if diff := cmp.Diff(podSpec(t, tc.want), p.Spec, quantities, ignoreTolerations); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			again := p.DeepCopy()
			Pod(again)
			if diff := cmp.Diff(p.Spec, again.Spec); diff != "" {
				t.Errorf("defaulting twice changes the spec (-once +twice):\n%s", diff)
			}
		})
	}
}

// TestTolerations transcribes kube v1.37.2's
// plugin/pkg/admission/defaulttolerationseconds admission_test.go.
func TestTolerations(t *testing.T) {
	const notReady = "{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}"
	const unreachable = "{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}"
	tests := []struct {
		name       string
		spec, want string
	}{{
		name: "pod has no tolerations, expect add tolerations for not-ready:NoExecute and unreachable:NoExecute",
		spec: "[]",
		want: "[" + notReady + ", " + unreachable + "]",
	}, {
		name: "pod has tolerations, but none is for taint `not-ready:NoExecute` or `unreachable:NoExecute`, expect add tolerations",
		spec: "[{key: foo, operator: Equal, value: bar, effect: NoSchedule, tolerationSeconds: 700}]",
		want: "[{key: foo, operator: Equal, value: bar, effect: NoSchedule, tolerationSeconds: 700}, " + notReady + ", " + unreachable + "]",
	}, {
		name: "pod specified a toleration for taint `not-ready:NoExecute`, expect add toleration for `unreachable:NoExecute`",
		spec: "[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 700}]",
		want: "[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 700}, " + unreachable + "]",
	}, {
		name: "pod specified tolerations for both, expect no change",
		spec: "[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 700}, {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 700}]",
		want: "[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 700}, {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 700}]",
	}, {
		name: "pod specified toleration for taint `unreachable`, expect add toleration for `not-ready:NoExecute`",
		spec: "[{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 700}]",
		want: "[{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 700}, " + notReady + "]",
	}, {
		name: "pod has a toleration that tolerates all taints, expect no change",
		spec: "[{operator: Exists}]",
		want: "[{operator: Exists}]",
	}, {
		name: "a toleration of every effect of not-ready counts, as kube's does",
		spec: "[{key: node.kubernetes.io/not-ready, operator: Exists}]",
		want: "[{key: node.kubernetes.io/not-ready, operator: Exists}, " + unreachable + "]",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1.Pod{Spec: podSpec(t, "containers: [{name: c}]\ntolerations: "+tc.spec)}
			Pod(p)
			want := podSpec(t, "tolerations: "+tc.want).Tolerations
			if diff := cmp.Diff(want, p.Spec.Tolerations); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
		})
	}
}
