// Package version holds build information set by -ldflags.
package version

// Set by -ldflags "-X github.com/kubectl-sched/kubectl-sched/internal/version.Version=...".
var (
	Version = "dev"
	Commit  = "unknown"
	Date    = "unknown"
)

// KubernetesVersion is the kube-scheduler release whose decisions the engine follows.
const KubernetesVersion = "v1.37.2"
