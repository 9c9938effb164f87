package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/capacity"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// What capacity and drain share: the engine's configuration and the cluster
// (a dump, or the live cluster listed once, read-only), and how the answer
// is printed (exit status 3 for "no").

// loadWhatIf loads --config, the registry and the cluster; source is
// "snapshot" or "cluster". A dump is read as dryrun reads it (loadDump:
// the priorities of pods written by hand resolved), so both answer alike.
func loadWhatIf(ctx context.Context, s Settings, flags *genericclioptions.ConfigFlags, configPath string, snapshots []string, stdin io.Reader, errOut io.Writer) (
	cfg *configv1.KubeSchedulerConfiguration, reg schedcore.Registry, cl *snapshot.Cluster, source string, err error) {
	// Without --config, run's profile too, as dryrun.
	if cfg, err = loadConfig(configPath); err != nil {
		return nil, nil, nil, "", err
	}
	if reg, err = engine.Registry(s.ExtraPlugins); err != nil {
		return nil, nil, nil, "", err
	}
	if len(snapshots) > 0 {
		if cl, err = loadDump(snapshots, stdin, errOut); err != nil {
			return nil, nil, nil, "", err
		}
		return cfg, reg, cl, "snapshot", nil
	}
	clients, err := s.clients(flags)
	if err != nil {
		return nil, nil, nil, "", err
	}
	if cl, err = kube.ListCluster(ctx, clients, kube.ListOptions{}); err != nil {
		return nil, nil, nil, "", err
	}
	return cfg, reg, cl, "cluster", nil
}

// pendingNote says, for capacity and drain, that the cluster's pending
// pods are left out of the answer (how), where a dry-run of the same dump
// places them first; "" when there are none.
func pendingNote(cl *snapshot.Cluster, how string) string {
	n := 0
	for _, p := range cl.Pods {
		if engine.Pending(p) {
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("note: the cluster's pending pod is %s (kubectl sched dryrun places it)", how)
	}
	return fmt.Sprintf("note: the cluster's %d pending pods are %s (kubectl sched dryrun places them)", n, how)
}

// printWhatIf renders the report into a buffer (a failure leaves stdout
// empty), prints the cluster's warnings on stderr and the report on
// stdout, and ends with exit status 3 when the answer is no.
func printWhatIf(streams genericiooptions.IOStreams, warnings []string, render func(io.Writer) error, complete bool) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(streams.ErrOut, w)
	}
	if _, err := streams.Out.Write(buf.Bytes()); err != nil {
		return err
	}
	if !complete {
		return exitStatus{ExitIncomplete}
	}
	return nil
}

// configError marks an invalid scheduler configuration, found when the
// profiles are built, as a usage error naming the file.
func configError(configPath string, err error) error {
	if errors.Is(err, engine.ErrConfig) {
		return AsUsage(withConfigPath(configPath, err))
	}
	return err
}

// asInputError marks the errors of bad input files as usage errors (exit
// code 2).
func asInputError(err error) error {
	if errors.Is(err, snapshot.ErrInvalid) || errors.Is(err, capacity.ErrNotASpec) {
		return AsUsage(err)
	}
	return err
}

// oneStdin fails when more than one flag reads standard input.
func oneStdin(lists ...[]string) error {
	n := 0
	for _, l := range lists {
		for _, p := range l {
			if p == "-" {
				n++
			}
		}
	}
	if n > 1 {
		return UsageErrorf("only one file may be '-' (standard input)")
	}
	return nil
}

func clusterWhere(snapshots []string) string {
	if len(snapshots) > 0 {
		return strings.Join(snapshots, ", ")
	}
	return "the cluster"
}
