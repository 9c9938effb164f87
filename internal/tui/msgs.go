package tui

import (
	"time"

	"github.com/kubectl-sched/kubectl-sched/internal/top"
)

// tickMsg asks for the next scrape; seq drops ticks of a superseded loop.
type tickMsg struct{ seq int }

// scrapeMsg is the result of one scrape.
type scrapeMsg struct {
	sample *top.Sample
	err    error
	at     time.Time
}

// podsMsg is the result of listing the pending pods and their groups.
type podsMsg struct {
	pods   []top.PendingPod
	groups []top.PendingGroup
	err    error
}

// explainMsg is the rendered explanation of a pod.
type explainMsg struct {
	key  string
	text string
	err  error
}
