package replay

import (
	"context"
	"testing"
	"time"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
)

func TestSmokeOpenb(t *testing.T) {
	tr, err := FromOpenb("../../testdata/openb/openb_node_list_all_node.csv", "../../testdata/openb/openb_pod_list_default.csv", openb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := engine.LoadConfig("")
	reg, _ := engine.Registry(nil)
	start := time.Now()
	res, err := Run(context.Background(), tr, Options{Config: cfg, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v %+v", time.Since(start), res.Summary)
}
