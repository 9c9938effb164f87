// Package cli holds the kubectl-sched verbs: one file per verb, each with an
// Options struct (Complete/Validate/Run) and a NewCmd<Verb> constructor.
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Settings are what a custom binary adds: extra plugins (see app.WithPlugin).
type Settings struct {
	// ExtraPlugins are registered beside the in-tree plugins.
	ExtraPlugins schedcore.Registry
	// NewClients, when set, replaces how the verbs that talk to a cluster
	// build their clients from the kubectl flags (tests give fake ones).
	NewClients func(*genericclioptions.ConfigFlags) (*kube.Clients, error)
}

// clients builds the clients of a verb from its flags.
func (s Settings) clients(f *genericclioptions.ConfigFlags) (*kube.Clients, error) {
	if s.NewClients != nil {
		return s.NewClients(f)
	}
	return kube.NewClients(f)
}

// NewRootCmd builds the kubectl-sched command tree.
func NewRootCmd(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-sched",
		Short: "A Kubernetes scheduling engine: dry-run placements, explain pending pods, run as a scheduler",
		Long: strings.TrimSpace(`
kubectl sched bundles a complete Kubernetes scheduling engine that decides
exactly as kube-scheduler v1.37 does for the default profile, and reads the
KubeSchedulerConfiguration files you already have.`),
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl sched"},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetIn(streams.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return UsageErrorf("%v (see '%s --help')", err, c.CommandPath())
	})
	root.AddCommand(NewCmdDryRun(streams, settings))
	root.AddCommand(NewCmdReplay(streams, settings))
	root.AddCommand(NewCmdCompare(streams, settings))
	root.AddCommand(NewCmdSweep(streams, settings))
	root.AddCommand(NewCmdRun(streams, settings))
	root.AddCommand(NewCmdExplain(streams, settings))
	root.AddCommand(NewCmdCapacity(streams, settings))
	root.AddCommand(NewCmdDrain(streams, settings))
	root.AddCommand(NewCmdSnapshot(streams, settings))
	root.AddCommand(NewCmdTop(streams, settings))
	root.AddCommand(NewCmdVersion(streams))
	root.AddCommand(NewCmdSettings(streams))
	addCompletionCmd(root)
	addSettings(root)
	return root
}

// addSettings adds --settings and applies the user's settings to the
// flags of the verb about to run (not given on the command line), and to
// the defaults its --help shows.
func addSettings(root *cobra.Command) {
	root.PersistentFlags().String(settingsFlag, "", "Settings file (default $"+EnvSettings+", else $XDG_CONFIG_HOME/kubectl-sched/config.yaml or ~/.config/kubectl-sched/config.yaml)")
	_ = root.MarkPersistentFlagFilename(settingsFlag, "yaml", "yml")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if notVerbs[verbOf(cmd)] {
			return nil // settings loads its own; completion works with a bad file
		}
		s, err := loadSettings(cmd.Root(), settingsPathFlag(cmd))
		if err != nil {
			return err
		}
		return s.apply(cmd)
	}
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		// A bad settings file is reported when the verb runs; help
		// shows the built-in defaults then.
		if s, err := loadSettings(cmd.Root(), settingsPathFlag(cmd)); err == nil {
			s.annotateHelp(cmd)
		}
		help(cmd, args)
	})
}

// Execute runs the root command with args and returns the exit code,
// printing the error as one line on stderr.
func Execute(streams genericiooptions.IOStreams, settings Settings, args []string) int {
	return ExecuteContext(context.Background(), streams, settings, args)
}

// ExecuteContext is Execute with a context: cancelling it stops a running
// verb as SIGINT would (`run` shuts down gracefully).
func ExecuteContext(ctx context.Context, streams genericiooptions.IOStreams, settings Settings, args []string) int {
	root := NewRootCmd(streams, settings)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		var es exitStatus
		if errors.As(err, &es) {
			return es.code
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "error: ") {
			msg = "error: " + msg
		}
		fmt.Fprintln(streams.ErrOut, msg)
		if strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown flag") || strings.Contains(msg, "accepts ") {
			return ExitUsage
		}
		return ExitCode(err)
	}
	return ExitOK
}
