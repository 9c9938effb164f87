package e2e

import (
	"os"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// testCluster is shared by the package's tests; nil when KUBECTL_SCHED_E2E=0.
var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	// The user's settings file stays out of the verbs the tests run.
	noSettings, err := os.MkdirTemp("", "kubectl-sched-e2e-settings")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", noSettings)
	os.Unsetenv("KUBECTL_SCHED_SETTINGS")
	code := cluster.RunMain(m, cluster.Options{}, func(c *cluster.Cluster) { testCluster = c })
	os.RemoveAll(noSettings)
	os.Exit(code)
}

// requireCluster returns the shared cluster, or skips the test when the
// end-to-end tests are turned off.
func requireCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	if testCluster == nil {
		t.Skipf("%s=0: end-to-end tests are off", cluster.EnvE2E)
	}
	return testCluster
}
