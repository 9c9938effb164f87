// Package kube is the one place where kubectl-sched sets up client-go: the
// kubeconfig flags (cli-runtime's ConfigFlags, with in-cluster config as the
// fallback) become a rest.Config, a clientset and a shared informer factory.
package kube

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-sched/kubectl-sched/internal/version"
)

// UserAgent is what kubectl-sched tells the API server it is.
const UserAgent = "kubectl-sched"

// ErrKubeconfig marks a kubeconfig that cannot be used: a missing or
// malformed file, an unknown context, cluster or user (bad input, exit
// code 2).
var ErrKubeconfig = errors.New("unusable kubeconfig")

type kubeconfigError struct{ err error }

func (e kubeconfigError) Error() string   { return "loading kubeconfig: " + e.err.Error() }
func (e kubeconfigError) Unwrap() []error { return []error{e.err, ErrKubeconfig} }

// KubeconfigError wraps an error of loading the kubeconfig as
// ErrKubeconfig, saying "loading kubeconfig: ..." (nil stays nil).
func KubeconfigError(err error) error {
	if err == nil || errors.Is(err, ErrKubeconfig) {
		return err
	}
	return kubeconfigError{err}
}

// RESTConfig resolves the kubeconfig flags (--kubeconfig, --context,
// --server, ...; in-cluster config when run in a pod without a kubeconfig)
// into a rest.Config with the given client-side rate limits, as
// kube-scheduler takes them from clientConnection. qps or burst of zero
// keep client-go's defaults.
func RESTConfig(flags *genericclioptions.ConfigFlags, qps float32, burst int32) (*rest.Config, error) {
	if flags == nil {
		flags = genericclioptions.NewConfigFlags(true)
	}
	cfg, err := ToRESTConfig(flags)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	if qps != 0 {
		cfg.QPS = qps
	}
	if burst != 0 {
		cfg.Burst = int(burst)
	}
	cfg.UserAgent = fmt.Sprintf("%s/%s (%s/%s)", UserAgent, version.Version, runtime.GOOS, runtime.GOARCH)
	return cfg, nil
}

// ErrNoKubeconfig is returned when there is no kubeconfig to read (no
// --kubeconfig, KUBECONFIG names no file that exists, no ~/.kube/config),
// no --server, and the process does not run in a pod. client-go would then
// fall back to http://localhost:8080, where there is seldom an API server;
// kubectl says "no configuration has been provided" instead, and so do we
// (it is an ErrKubeconfig: bad input, exit code 2).
var ErrNoKubeconfig = errors.New("no kubeconfig found")

// ToRESTConfig resolves the kubeconfig flags as kubectl does (--kubeconfig,
// else the files of $KUBECONFIG, else ~/.kube/config; in-cluster config in
// a pod), refusing to fall back to http://localhost:8080 when there is
// none of these and no --server (ErrNoKubeconfig). Errors are
// ErrKubeconfig.
func ToRESTConfig(flags *genericclioptions.ConfigFlags) (*rest.Config, error) {
	if err := configured(flags); err != nil {
		return nil, KubeconfigError(err)
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, KubeconfigError(err)
	}
	return cfg, nil
}

// configured returns ErrNoKubeconfig, saying where it looked, when the
// flags name no server and no kubeconfig holds a cluster.
func configured(flags *genericclioptions.ConfigFlags) error {
	if flags.APIServer != nil && *flags.APIServer != "" {
		return nil
	}
	if flags.KubeConfig != nil && *flags.KubeConfig != "" {
		return nil // a missing or bad file is client-go's error to word
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 || len(raw.Contexts) > 0 {
		return nil // an error here is client-go's to word, as above
	}
	if _, err := rest.InClusterConfig(); err == nil {
		return nil
	}
	where := "~/.kube/config does not exist"
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		where = fmt.Sprintf("%s=%s names no kubeconfig with a cluster", clientcmd.RecommendedConfigPathEnvVar, env)
	} else if home := clientcmd.RecommendedHomeFile; home != "" {
		where = fmt.Sprintf("KUBECONFIG is not set and %s holds no cluster", home)
		if _, err := os.Stat(home); errors.Is(err, os.ErrNotExist) {
			where = fmt.Sprintf("KUBECONFIG is not set and %s does not exist", home)
		}
	}
	return fmt.Errorf("%w (%s, and not in a pod): pass --kubeconfig FILE, set KUBECONFIG, or give --server URL", ErrNoKubeconfig, where)
}

// ClientsForConfig returns a clientset for cfg and a shared informer factory over it
// whose pod informer is kube-scheduler's: it leaves out pods that Succeeded
// or Failed (they hold no resources) and drops managedFields to save memory.
// resync is the informers' resync period (kube-scheduler uses 0).
func ClientsForConfig(cfg *rest.Config, resync time.Duration) (kubernetes.Interface, informers.SharedInformerFactory, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating clientset: %w", err)
	}
	return client, NewInformerFactory(client, resync), nil
}

// NewInformerFactory returns a shared informer factory whose pod informer
// watches only pods that are neither Succeeded nor Failed, as
// kube-scheduler's does.
func NewInformerFactory(client kubernetes.Interface, resync time.Duration) informers.SharedInformerFactory {
	f := informers.NewSharedInformerFactory(client, resync)
	f.InformerFor(&v1.Pod{}, func(cs kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return newPodInformer(cs, resync)
	})
	return f
}

// PodFieldSelector is the field selector of the pod informer.
var PodFieldSelector = fmt.Sprintf("status.phase!=%v,status.phase!=%v", v1.PodSucceeded, v1.PodFailed)

func newPodInformer(cs kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	inf := coreinformers.NewPodInformerWithOptions(cs, metav1.NamespaceAll, internalinterfaces.InformerOptions{
		ResyncPeriod:     resync,
		Indexers:         cache.Indexers{},
		TweakListOptions: func(o *metav1.ListOptions) { o.FieldSelector = PodFieldSelector },
	})
	_ = inf.SetTransform(stripManagedFields)
	return inf
}

func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

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
		return "", false, KubeconfigError(err)
	}
	return ns, explicit, nil
}
