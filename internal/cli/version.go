package cli

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/version"
)

// VersionOptions prints build information.
type VersionOptions struct {
	genericiooptions.IOStreams
	Output string
}

// NewCmdVersion builds `kubectl sched version`.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-sched and the Kubernetes release it follows",
		Example: `  # Print the version
  kubectl sched version

  # As JSON (or -o yaml): version, commit, date, kubernetes, go, platform
  kubectl sched version -o json

  # Only the Kubernetes release whose scheduling it follows
  kubectl sched version -o json | jq -r .kubernetes`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: one line of text)")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(versionFormats[1:]...))
	return cmd
}

// versionFormats are the formats of -o: text, json and yaml, as kubectl
// version's.
var versionFormats = []string{"", "json", "yaml"}

// Validate checks the output format.
func (o *VersionOptions) Validate() error {
	if err := checkFormat(o.Output, versionFormats, redirectHint); err != nil {
		return err
	}
	return nil
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	info := map[string]string{
		"version": version.Version, "commit": version.Commit, "date": version.Date,
		"kubernetes": version.KubernetesVersion, "go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH,
	}
	switch o.Output {
	case "json":
		b, _ := json.MarshalIndent(info, "", "  ")
		fmt.Fprintf(o.Out, "%s\n", b)
		return nil
	case "yaml":
		b, _ := yaml.Marshal(info)
		_, err := o.Out.Write(b)
		return err
	}
	fmt.Fprintf(o.Out, "kubectl-sched %s (commit %s, built %s, %s %s)\nscheduling behaviour of kube-scheduler %s\n",
		version.Version, version.Commit, version.Date, runtime.Version(), info["platform"], version.KubernetesVersion)
	return nil
}
