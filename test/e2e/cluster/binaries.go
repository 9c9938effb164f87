package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Binaries are the names of the programs a cluster runs, as they appear in the
// binary directory.
const (
	EtcdBinary      = "etcd"
	APIServerBinary = "kube-apiserver"
	SchedulerBinary = "kube-scheduler"
)

// EnvBinDir overrides where the binaries are built and looked up; it is read by
// hack/build-e2e-bins.sh as well.
const EnvBinDir = "KUBECTL_SCHED_E2E_BIN_DIR"

// ErrNoBuildScript is returned by EnsureBinaries when neither the binaries nor
// hack/build-e2e-bins.sh can be found.
var ErrNoBuildScript = errors.New("hack/build-e2e-bins.sh not found")

// EnsureBinaries returns the directory holding etcd, kube-apiserver and
// kube-scheduler, building whatever is missing with hack/build-e2e-bins.sh
// (found by walking up from the working directory, then from this source
// file). The script's progress goes to progress (may be nil). A cold build
// takes several minutes on two cores; later calls return at once.
func EnsureBinaries(ctx context.Context, progress io.Writer) (string, error) {
	script, err := findBuildScript()
	if err != nil {
		// Outside the repository: binaries put in place by hand are fine.
		if dir := os.Getenv(EnvBinDir); dir != "" && haveBinaries(dir) {
			return dir, nil
		}
		return "", err
	}
	if progress == nil {
		progress = io.Discard
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout = &out
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running %s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if !haveBinaries(dir) {
		return "", fmt.Errorf("%s printed %q, which lacks the binaries", script, dir)
	}
	return dir, nil
}

func haveBinaries(dir string) bool {
	for _, b := range []string{EtcdBinary, APIServerBinary, SchedulerBinary} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return dir != ""
}

func findBuildScript() (string, error) {
	const rel = "hack/build-e2e-bins.sh"
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, rel)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", ErrNoBuildScript
}
