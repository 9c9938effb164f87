// Command custom-plugin is kubectl-sched with one more plugin,
// PoolPreference: the whole binary is one expression over app.Main, as with
// scheduler-plugins. Build it with
//
//	go build -o kubectl-sched ./examples/custom-plugin
//
// and enable the plugin in a KubeSchedulerConfiguration (sched-config.yaml
// here):
//
//	kubectl-sched dryrun -f examples/cluster.yaml --config examples/custom-plugin/sched-config.yaml
package main

import (
	"os"

	"github.com/kubectl-sched/kubectl-sched/app"
	"github.com/kubectl-sched/kubectl-sched/examples/custom-plugin/poolpreference"
)

func main() {
	os.Exit(app.Main(app.WithPlugin(poolpreference.Name, poolpreference.New, poolpreference.NewArgs)))
}
