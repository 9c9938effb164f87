package cli

import (
	"os"
	"strings"
	"testing"
)

// TestMain keeps the user's settings out of the tests: no settings file
// (XDG_CONFIG_HOME is an empty directory) and no KUBECTL_SCHED_ variables.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubectl-sched-cli-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, EnvPrefix+"_") {
			os.Unsetenv(name)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
