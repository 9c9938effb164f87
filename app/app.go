// Package app builds the kubectl-sched command, so that a custom binary with
// extra plugins is one expression, as with scheduler-plugins:
//
//	func main() { os.Exit(app.Main(app.WithPlugin("MyPlugin", myplugin.New, nil))) }
package app

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Option customises the command.
type Option func(*cli.Settings)

// WithPlugin registers an out-of-tree plugin; newArgs may be nil when the
// plugin takes no args.
func WithPlugin(name string, factory schedcore.PluginFactory, newArgs func() runtime.Object) Option {
	return func(s *cli.Settings) {
		if s.ExtraPlugins == nil {
			s.ExtraPlugins = schedcore.Registry{}
		}
		s.ExtraPlugins[name] = schedcore.PluginSpec{Factory: factory, NewArgs: newArgs}
	}
}

// NewCommand returns the root command with the options applied.
func NewCommand(streams genericiooptions.IOStreams, opts ...Option) *cobra.Command {
	var s cli.Settings
	for _, o := range opts {
		o(&s)
	}
	return cli.NewRootCmd(streams, s)
}

// Main runs the command on os.Args with the process's streams and returns
// the exit code.
func Main(opts ...Option) int {
	var s cli.Settings
	for _, o := range opts {
		o(&s)
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	return cli.Execute(streams, s, os.Args[1:])
}
