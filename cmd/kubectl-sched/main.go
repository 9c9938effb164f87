// Command kubectl-sched is a kubectl plugin with its own Kubernetes
// scheduling engine: `kubectl sched dryrun|explain|run|top|version`.
package main

import (
	"os"

	"github.com/kubectl-sched/kubectl-sched/app"
)

func main() { os.Exit(app.Main()) }
