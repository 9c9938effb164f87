package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
)

// completions runs `kubectl-sched __complete args...` as the shell scripts
// do and returns the suggestions and the directive line.
func completions(t *testing.T, s Settings, args ...string) (got []string, directive string) {
	t.Helper()
	code, out, stderr := runWith(t, s, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d: %s", args, code, stderr)
	}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, ":") {
			directive = l
			continue
		}
		if l != "" {
			got = append(got, l)
		}
	}
	return got, directive
}

// noCluster fails the test if completion contacts a cluster.
func noCluster(t *testing.T) Settings {
	return Settings{NewClients: func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		t.Error("completion contacted the cluster")
		return nil, errors.New("no cluster")
	}}
}

func TestCompletion(t *testing.T) {
	live := fakeCluster(t, small)
	kc := fake.NewClientset(
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ml"}},
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
	)
	namespaces := Settings{NewClients: func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: kc, Discovery: kc.Discovery()}, nil
	}}
	broken := Settings{NewClients: func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return nil, errors.New("connection refused")
	}}
	const noFile = ":4" // cobra.ShellCompDirectiveNoFileComp
	tests := []struct {
		name     string
		settings Settings
		args     []string
		want     []string
		wantDir  string
	}{
		{"the verbs", noCluster(t), []string{"e"}, []string{"explain\tExplain, node by node, why a pod fits where it does or does not fit at all"}, noFile},
		{"explain's first argument is the kind", noCluster(t), []string{"explain", ""}, []string{"pod\tone pod: where it fits, or why not", "podgroup\ta PodGroup's pending members: whether the group fits"}, noFile},
		{"explain's kinds by prefix", noCluster(t), []string{"explain", "podg"}, []string{"podgroup\ta PodGroup's pending members: whether the group fits"}, noFile},
		{"no kind but pod", noCluster(t), []string{"explain", "node"}, nil, noFile},
		{"pod names of the namespace come from the cluster", live, []string{"explain", "pod", "-n", "shop", ""}, []string{"batch", "db-0", "web-1", "web-2"}, noFile},
		{"pod names are filtered by the prefix", live, []string{"explain", "pod", "-n", "shop", "web"}, []string{"web-1", "web-2"}, noFile},
		{"pod/NAME completes with the kind in front", live, []string{"explain", "-n", "ml", "pod/tr"}, []string{"pod/train", "pod/train-big"}, noFile},
		{"one pod at a time", live, []string{"explain", "pod", "web-1", "-n", "shop", ""}, nil, noFile},
		{"no pod names with -f", noCluster(t), []string{"explain", "pod", "-f", "x.yaml", ""}, nil, noFile},
		{"pod names come from --snapshot without contacting the cluster", noCluster(t), []string{"explain", "pod", "--snapshot", small, "-n", "ml", ""}, []string{"train", "train-big"}, noFile},
		{"an unreachable cluster gives no completions", broken, []string{"explain", "pod", "-n", "shop", ""}, nil, noFile},
		{"--node completes node names from the cluster", live, []string{"explain", "pod", "web-1", "-n", "shop", "--node", ""}, []string{"cordoned", "gpu-a", "worker-a", "worker-b"}, noFile},
		{"--node completes node names from the snapshot", noCluster(t), []string{"explain", "pod", "web-1", "--snapshot", small, "--node", "w"}, []string{"worker-a", "worker-b"}, noFile},
		{"-n completes namespaces from the cluster", namespaces, []string{"snapshot", "-n", ""}, []string{"kube-system", "ml", "shop"}, noFile},
		{"-n of explain completes the snapshot's namespaces", noCluster(t), []string{"explain", "pod", "--snapshot", small, "-n", ""}, []string{"ml", "shop"}, noFile},
		{"-o of dryrun completes the formats", noCluster(t), []string{"dryrun", "-o", ""}, []string{"table", "wide", "json", "yaml"}, noFile},
		{"-o of snapshot completes its formats", noCluster(t), []string{"snapshot", "-o", "j"}, []string{"json"}, noFile},
		{"--output-file of snapshot completes YAML and JSON files", noCluster(t), []string{"snapshot", "--output-file", ""}, []string{"yaml", "yml", "json"}, ":8"},
		{"no positional arguments for dryrun", noCluster(t), []string{"dryrun", ""}, nil, noFile},
		{"drain completes node names from the snapshot", noCluster(t), []string{"drain", "--snapshot", small, "w"}, []string{"worker-a", "worker-b"}, noFile},
		{"drain leaves out the nodes already named", live, []string{"drain", "worker-b", "gpu-a", ""}, []string{"cordoned", "worker-a"}, noFile},
		{"drain -l completes node label keys", noCluster(t), []string{"drain", "--snapshot", small, "-l", "t"}, []string{"topology.kubernetes.io/zone="}, ":6"}, // NoSpace|NoFileComp
		{"drain -l completes a key's values", noCluster(t), []string{"drain", "--snapshot", small, "-l", "topology.kubernetes.io/zone="}, []string{"topology.kubernetes.io/zone=zone-1", "topology.kubernetes.io/zone=zone-2"}, noFile},
		{"drain -l completes the next requirement after a comma", noCluster(t), []string{"drain", "--snapshot", small, "-l", "gpu=true,kubernetes.io/hostname=g"}, []string{"gpu=true,kubernetes.io/hostname=gpu-a"}, noFile},
		{"capacity --group-by completes node label keys", noCluster(t), []string{"capacity", "--snapshot", small, "--group-by", ""}, []string{"gpu", "kubernetes.io/hostname", "topology.kubernetes.io/zone"}, noFile},
		{"no positional arguments for capacity", noCluster(t), []string{"capacity", ""}, nil, noFile},
		{"--config completes YAML and JSON files", noCluster(t), []string{"dryrun", "--config", ""}, []string{"yaml", "yml", "json"}, ":8"}, // ShellCompDirectiveFilterFileExt
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dir := completions(t, tt.settings, tt.args...)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("completions (-want +got):\n%s", d)
			}
			if dir != tt.wantDir {
				t.Errorf("directive = %q, want %q", dir, tt.wantDir)
			}
		})
	}
}

// completion without a shell, or with one cobra does not know, printed
// the help and exited 0.
func TestCompletionOfNoOrAnUnknownShellIsAnError(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"completion"}, "error: a shell is required: bash, fish, powershell or zsh (see 'kubectl sched completion --help')\n"},
		{[]string{"completion", "bogus"}, "error: unknown command \"bogus\" for \"kubectl sched completion\"\n"},
	} {
		code, out, stderr := run(t, "", tt.args...)
		if code != 2 || out != "" || stderr != tt.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing, %q", tt.args, code, out, stderr, tt.want)
		}
	}
}
