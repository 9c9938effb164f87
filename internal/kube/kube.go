// Package kube is the one place that sets up client-go: kubectl's
// ConfigFlags (--kubeconfig, --context, -n, ...) turned into a rest.Config
// and clientsets. Verbs that talk to a cluster get their flags and clients
// here and nowhere else.
package kube

import (
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// NewConfigFlags returns kubectl's standard connection flags, with the
// discovery cache kubectl uses.
func NewConfigFlags() *genericclioptions.ConfigFlags {
	return genericclioptions.NewConfigFlags(true)
}

// Namespace resolves the namespace: -n when given; otherwise, when
// useKubeconfig is set, the current context's namespace; otherwise
// "default". It reports whether -n was given explicitly. With useKubeconfig
// false (offline verbs) the kubeconfig is never read.
func Namespace(f *genericclioptions.ConfigFlags, useKubeconfig bool) (ns string, explicit bool, err error) {
	if f.Namespace != nil && *f.Namespace != "" {
		return *f.Namespace, true, nil
	}
	if !useKubeconfig {
		return "default", false, nil
	}
	ns, explicit, err = f.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, err
	}
	return ns, explicit, nil
}
