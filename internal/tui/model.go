package tui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/table"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-sched/kubectl-sched/internal/top"
)

// Defaults of Options.
const (
	DefaultInterval = 2 * time.Second
	// maxBackoff caps the wait between failed scrapes.
	maxBackoff = 30 * time.Second
)

// Options configure the Model.
type Options struct {
	// Source is scraped every Interval.
	Source   top.Source
	Interval time.Duration
	// Window is how far back quantiles and sparklines look.
	Window time.Duration
	// Pods lists the pending pods of the given profiles (all pods' when
	// empty); nil hides the pods panel's content (no cluster access).
	Pods func(ctx context.Context, profiles []string) ([]top.PendingPod, error)
	// Groups gathers the listed pending pods into the Workload API
	// PodGroups they name (top.ListPendingGroups); nil shows no groups.
	Groups func(ctx context.Context, pods []top.PendingPod) ([]top.PendingGroup, error)
	// NoPods says why Pods is nil.
	NoPods string
	// NoSourceHint says how to give top something to scrape; it is shown
	// under the error while no scrape has succeeded yet.
	NoSourceHint []string
	// Explain renders `explain pod` as text for the given width; nil turns
	// Enter off.
	Explain func(ctx context.Context, namespace, name string, width int) (string, error)
	// Context bounds scrapes, listings and explanations.
	Context context.Context
	// Now is the clock (tests fix it).
	Now func() time.Time
}

// Panels below the queue, cycled with tab.
const (
	panelLatency = iota
	panelWaiting
	panelPods
	numPanels
)

var panelNames = [numPanels]string{"Latency", "Why pods wait", "Pending pods"}

// Model is the bubbletea model of `top`.
type Model struct {
	o      Options
	now    func() time.Time
	keys   keyMap
	styles styles

	width, height int

	window *top.Window
	stats  *top.Stats
	// seq numbers the tick loop: a tick of an older loop is dropped.
	seq      int
	paused   bool
	scraping bool
	lastErr  error
	failures int
	retryIn  time.Duration

	panel        int
	pods         []top.PendingPod
	groups       []top.PendingGroup
	podsErr      error
	podsInFlight bool
	table        table.Model
	filter       textinput.Model
	filtering    bool

	help     help.Model
	showHelp bool
	spinner  spinner.Model

	// The explain view.
	explaining  bool
	explainKey  string
	explainErr  error
	explainBusy bool
	viewport    viewport.Model
}

// New returns the model; run it with tea.NewProgram(m).Run().
func New(o Options) *Model {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Window <= 0 {
		o.Window = top.DefaultWindow
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	m := &Model{o: o, now: now, keys: defaultKeys(), styles: defaultStyles(), window: &top.Window{Span: o.Window}, width: 80, height: 24}
	m.help = help.New()
	m.spinner = spinner.New(spinner.WithSpinner(spinner.Dot))
	m.filter = textinput.New()
	m.filter.Prompt = "/"
	m.filter.Placeholder = "namespace/name or reason"
	m.table = table.New(table.WithFocused(true))
	ts := table.DefaultStyles()
	ts.Selected = m.styles.Selected
	ts.Header = ts.Header.Foreground(nil)
	m.table.SetStyles(ts)
	m.viewport = viewport.New()
	m.layout()
	return m
}

// Stats are the latest computed stats (nil before the first scrape).
func (m *Model) Stats() *top.Stats { return m.stats }

// Init implements tea.Model: the first scrape at once.
func (m *Model) Init() tea.Cmd {
	m.scraping = true
	return tea.Batch(m.scrapeCmd(), m.spinner.Tick)
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tickMsg:
		if msg.seq != m.seq || m.paused || m.scraping {
			return m, nil
		}
		m.scraping = true
		return m, m.scrapeCmd()
	case scrapeMsg:
		return m, m.scraped(msg)
	case podsMsg:
		m.podsInFlight = false
		m.podsErr = msg.err
		if msg.err == nil {
			m.pods, m.groups = msg.pods, msg.groups
			m.refreshTable()
		}
		return m, nil
	case explainMsg:
		if msg.key == m.explainKey {
			m.explainBusy = false
			m.explainErr = msg.err
			m.viewport.SetContent(msg.text)
			m.viewport.GotoTop()
		}
		return m, nil
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return m, cmd
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	if m.filtering {
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		return m, cmd
	}
	return m, nil
}

// scraped takes a scrape's result and schedules the next one: after the
// interval, or after a doubling backoff while scrapes fail.
func (m *Model) scraped(msg scrapeMsg) tea.Cmd {
	m.scraping = false
	if msg.err != nil || msg.sample == nil {
		m.lastErr = msg.err
		if m.lastErr == nil {
			m.lastErr = top.ErrNoMetrics
		}
		m.failures++
		m.retryIn = backoff(m.o.Interval, m.failures)
		if m.paused {
			return nil
		}
		return m.tickCmd(m.retryIn)
	}
	m.lastErr, m.failures, m.retryIn = nil, 0, 0
	m.window.Add(msg.sample)
	m.stats = top.Compute(m.window)
	m.stats.Source = m.o.Source.String()
	var cmds []tea.Cmd
	if !m.paused {
		cmds = append(cmds, m.tickCmd(m.o.Interval))
	}
	cmds = append(cmds, m.podsCmd())
	return tea.Batch(cmds...)
}

// backoff is the wait before retry n (1-based): the interval, doubled each
// time, at most maxBackoff (or the interval if that is longer).
func backoff(interval time.Duration, n int) time.Duration {
	d := interval
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	if d > maxBackoff && interval < maxBackoff {
		d = maxBackoff
	}
	return d
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
			m.filter.Blur()
		case "esc":
			m.filtering = false
			m.filter.Blur()
			m.filter.SetValue("")
		default:
			var cmd tea.Cmd
			m.filter, cmd = m.filter.Update(msg)
			m.refreshTable()
			return cmd
		}
		m.refreshTable()
		return nil
	}
	if m.explaining {
		switch {
		case key.Matches(msg, k.Quit):
			return tea.Quit
		case key.Matches(msg, k.Back):
			m.explaining = false
			return nil
		case key.Matches(msg, k.Help):
			m.showHelp = !m.showHelp
			m.layout()
			return nil
		}
		var cmd tea.Cmd
		m.viewport, cmd = m.viewport.Update(msg)
		return cmd
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Tab):
		m.panel = (m.panel + 1) % numPanels
	case key.Matches(msg, k.BackTab):
		m.panel = (m.panel + numPanels - 1) % numPanels
	case key.Matches(msg, k.Pause):
		m.paused = !m.paused
		if !m.paused {
			// A new loop: scrape now, and drop the ticks of the old one.
			m.seq++
			if !m.scraping {
				m.scraping = true
				return m.scrapeCmd()
			}
		}
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
		m.layout()
	case key.Matches(msg, k.Filter):
		m.panel = panelPods
		m.filtering = true
		return m.filter.Focus()
	case key.Matches(msg, k.Back):
		if m.filter.Value() != "" {
			m.filter.SetValue("")
			m.refreshTable()
		}
	case key.Matches(msg, k.Enter):
		if m.panel != panelPods || m.o.Explain == nil {
			return nil
		}
		pods := m.visiblePods()
		i := m.table.Cursor()
		if i < 0 || i >= len(pods) {
			return nil
		}
		p := pods[i]
		m.explaining, m.explainBusy, m.explainErr = true, true, nil
		m.explainKey = p.Key()
		m.viewport.SetContent("")
		return tea.Batch(m.explainCmd(p.Namespace, p.Name), m.spinner.Tick)
	case m.panel == panelPods:
		var cmd tea.Cmd
		m.table, cmd = m.table.Update(msg)
		return cmd
	}
	return nil
}

// visiblePods are the pods that pass the filter.
func (m *Model) visiblePods() []top.PendingPod {
	f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	if f == "" {
		return m.pods
	}
	var out []top.PendingPod
	for _, p := range m.pods {
		if strings.Contains(strings.ToLower(p.Key()+" "+p.Reason+" "+p.Message), f) {
			out = append(out, p)
		}
	}
	return out
}
