// Package version holds build information set by -ldflags (the Makefile and
// .goreleaser.yaml); a binary built without them (go install ...@v0.1.0)
// falls back to what the Go toolchain recorded in it.
package version

import "runtime/debug"

// Set by -ldflags "-X github.com/kubectl-sched/kubectl-sched/internal/version.Version=...".
var (
	Version = "dev"
	Commit  = "unknown"
	Date    = "unknown"
)

// KubernetesVersion is the kube-scheduler release whose decisions the engine follows.
const KubernetesVersion = "v1.37.2"

func init() { fromBuildInfo(debug.ReadBuildInfo) }

// fromBuildInfo fills what -ldflags left unset from the build info: the
// module version (set by go install pkg@version; "(devel)" otherwise) and
// the VCS revision and time (set by go build in a checkout).
func fromBuildInfo(read func() (*debug.BuildInfo, bool)) {
	bi, ok := read()
	if !ok {
		return
	}
	if v := bi.Main.Version; Version == "dev" && v != "" && v != "(devel)" {
		Version = v
	}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && Commit == "unknown" && s.Value != "":
			Commit = s.Value
			if len(Commit) > 12 {
				Commit = Commit[:12]
			}
		case s.Key == "vcs.time" && Date == "unknown" && s.Value != "":
			Date = s.Value
		}
	}
}
