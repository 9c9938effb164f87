package docs

import (
	"os"
	"testing"
)

// TestMain keeps the user's settings file (docs/config.md) out of the
// examples the tests run: their output is the built-in defaults'.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubectl-sched-docs-settings")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Unsetenv("KUBECTL_SCHED_SETTINGS")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
