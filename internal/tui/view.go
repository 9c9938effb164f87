package tui

import (
	"fmt"
	"math"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/top"
)

// Minimum usable size; smaller terminals get a one-line notice.
const (
	minWidth  = 40
	minHeight = 12
)

// View implements tea.Model.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "kubectl sched top"
	return v
}

// Render is the screen as text (with ANSI styles), exactly width x height.
func (m *Model) Render() string {
	if m.width < minWidth || m.height < minHeight {
		return fit([]string{fmt.Sprintf("kubectl sched top needs %dx%d (have %dx%d)", minWidth, minHeight, m.width, m.height)}, m.width, m.height)
	}
	var lines []string
	lines = append(lines, m.titleLine())
	if m.explaining {
		lines = append(lines, strings.Split(m.viewport.View(), "\n")...)
		lines = fitHeight(lines, m.height-1-m.helpHeight())
	} else {
		lines = append(lines, m.queueLines()...)
		lines = append(lines, m.tabLine())
		body := m.bodyLines(m.bodyHeight())
		if m.stats == nil && m.lastErr != nil {
			body = m.nothingScrapedLines()
		}
		lines = append(lines, fitHeight(body, m.bodyHeight())...)
	}
	lines = append(lines, m.statusLine())
	lines = append(lines, strings.Split(m.helpView(), "\n")...)
	return fit(lines, m.width, m.height)
}

// layout sizes the table, viewport and help to the window.
func (m *Model) layout() {
	m.help.SetWidth(m.width)
	h := m.bodyHeight()
	if m.filterShown() {
		h--
	}
	// The selected pod's whole message gets its own lines below the
	// table, whose column cuts it; the pending groups go above it.
	h -= m.detailHeight() + len(m.groupLines())
	m.table.SetWidth(m.width)
	m.table.SetHeight(max(h, 2))
	m.table.SetColumns(podColumns(m.width))
	m.viewport.SetWidth(m.width)
	m.viewport.SetHeight(max(m.height-2-m.helpHeight(), 1))
	m.filter.SetWidth(max(m.width-4, 10))
}

func (m *Model) filterShown() bool { return m.filtering || m.filter.Value() != "" }

func (m *Model) helpHeight() int { return strings.Count(m.helpView(), "\n") + 1 }

func (m *Model) helpView() string {
	if m.explaining {
		return m.help.ShortHelpView([]key.Binding{m.keys.Back, m.keys.Up, m.keys.Down, m.keys.Quit})
	}
	if m.showHelp {
		return m.help.FullHelpView(m.keys.FullHelp())
	}
	return m.help.ShortHelpView(m.keys.ShortHelp())
}

func (m *Model) queueCount() int {
	if m.stats == nil || len(m.stats.Queues) == 0 {
		return len(top.Queues)
	}
	return len(m.stats.Queues)
}

// bodyHeight is what is left for the active panel: the title, the queue
// panel (a header, the queues, the flow and attempts lines), the tab line,
// the status line and the help.
func (m *Model) bodyHeight() int {
	return max(m.height-1-(m.queueCount()+3)-1-1-m.helpHeight(), 1)
}

func (m *Model) titleLine() string {
	s := m.styles
	left := s.Title.Render("kubectl sched top") + " " + s.Dim.Render(m.o.Source.String())
	if m.stats != nil && len(m.stats.Profiles) > 0 {
		left += s.Dim.Render(" · " + strings.Join(m.stats.Profiles, ","))
	}
	var right string
	switch {
	case m.explaining:
		right = "explain pod " + m.explainKey
	case m.paused:
		right = s.Warn.Render("PAUSED")
	}
	return spread(left, right, m.width)
}

func (m *Model) windowLabel() string {
	return "last " + shortDuration(m.o.Window)
}

func (m *Model) queueLines() []string {
	s := m.styles
	w := m.width
	const nameW, numW = 14, 8
	sparkW := max(w-nameW-numW-2, 0)
	lines := []string{s.Header.Render(pad("QUEUE", nameW)+lpad("PENDING", numW)) + "  " + s.Dim.Render(m.windowLabel())}
	st := m.stats
	if st == nil {
		for _, q := range top.Queues {
			lines = append(lines, pad(q, nameW)+lpad("-", numW))
		}
		return append(lines, "in -  out -", "attempts/s -")
	}
	for _, q := range st.Queues {
		lines = append(lines, pad(q.Name, nameW)+lpad(num(q.Pending), numW)+"  "+s.Spark.Render(sparkline(q.History, sparkW)))
	}
	haveRates := st.IntervalSeconds > 0
	f := st.Flow
	flow := fmt.Sprintf("in %s  out %s  scheduled %s", rate(f.InPerSecond, haveRates), rate(f.OutPerSecond, haveRates), rate(f.BoundPerSecond, haveRates))
	if st.WindowSeconds > 0 {
		trend := fmt.Sprintf("  pending %+.1f/s", f.PendingChangePerSecond)
		// Only the queues that drain by themselves get a time: pods no
		// node fits stay in the unschedulable pool.
		if eta, ok := st.DrainETA(); ok {
			trend += fmt.Sprintf(" (active+backoff empty in ~%s)", shortDuration(eta))
		}
		flow += trend
	}
	lines = append(lines, flow)
	att := "attempts/s"
	for _, a := range st.Attempts {
		v := "-"
		if haveRates {
			v = fmt.Sprintf("%.1f", a.PerSecond)
		}
		label := a.Result + " " + v
		switch {
		case a.Result == "scheduled" && a.PerSecond > 0:
			label = s.Good.Render(label)
		case a.Result != "scheduled" && a.PerSecond > 0:
			label = s.Bad.Render(label)
		}
		att += "  " + label
	}
	if rest := w - lipgloss.Width(att) - 2; rest >= 8 {
		att += "  " + s.Spark.Render(sparkline(f.OutHistory, rest))
	}
	return append(lines, att)
}

func (m *Model) tabLine() string {
	var parts []string
	for i, name := range panelNames {
		if i == m.panel {
			parts = append(parts, m.styles.TabActive.Render(name))
		} else {
			parts = append(parts, m.styles.TabInactive.Render(name))
		}
	}
	return strings.Join(parts, m.styles.Dim.Render("│"))
}

func (m *Model) bodyLines(h int) []string {
	switch m.panel {
	case panelLatency:
		return m.latencyLines(h)
	case panelWaiting:
		return m.waitingLines()
	default:
		return m.podLines()
	}
}

func (m *Model) latencyLines(h int) []string {
	s := m.styles
	st := m.stats
	const colW = 9
	nameW := max(m.width-4*colW, 10)
	header := s.Header.Render(pad("LATENCY ("+m.windowLabel()+")", nameW) + lpad("p50", colW) + lpad("p90", colW) + lpad("p99", colW) + lpad("n", colW))
	lines := []string{header}
	if st == nil {
		return lines
	}
	row := func(indent string, l top.Latency) string {
		return pad(indent+l.Name, nameW) + lpad(seconds(l.P50), colW) + lpad(seconds(l.P90), colW) + lpad(seconds(l.P99), colW) + lpad(num(l.Count), colW)
	}
	for _, l := range st.Latency {
		lines = append(lines, row("", l))
	}
	if len(st.Latency) == 0 {
		lines = append(lines, s.Dim.Render("no scheduling latency metrics yet"))
	}
	// Extension points and plugins share what is left, busiest first.
	left := h - len(lines)
	if len(st.ExtensionPoints) > 0 && left > 1 {
		lines = append(lines, s.Dim.Render("extension point"))
		n := min(len(st.ExtensionPoints), left-1)
		if len(st.Plugins) > 0 {
			n = min(n, max((left-2)/2, 1))
		}
		for _, l := range st.ExtensionPoints[:n] {
			lines = append(lines, row("  ", l))
		}
	}
	left = h - len(lines)
	if len(st.Plugins) > 0 && left > 1 {
		lines = append(lines, s.Dim.Render("plugin"))
		for _, l := range st.Plugins[:min(len(st.Plugins), left-1)] {
			lines = append(lines, row("  ", l))
		}
	}
	return lines
}

func (m *Model) waitingLines() []string {
	s := m.styles
	st := m.stats
	lines := []string{s.Header.Render("UNSCHEDULABLE PODS BY PLUGIN")}
	if st == nil {
		return lines
	}
	if len(st.Unschedulable) == 0 {
		lines = append(lines, s.Dim.Render("  none"))
	}
	const nameW, numW = 26, 7
	barW := max(m.width-nameW-numW-1, 1)
	var most float64
	for _, u := range st.Unschedulable {
		most = math.Max(most, u.Pods)
	}
	for _, u := range st.Unschedulable {
		n := int(math.Round(u.Pods / most * float64(barW)))
		lines = append(lines, pad("  "+u.Plugin, nameW)+lpad(num(u.Pods), numW)+" "+s.Bar.Render(strings.Repeat("█", max(n, 1))))
	}
	p := st.Preemption
	lines = append(lines, "", s.Header.Render("PREEMPTION")+fmt.Sprintf("  %s  %s attempts in window (%s total)  %s victims of %s preemptors",
		rate(p.AttemptsPerSecond, st.IntervalSeconds > 0), num(p.AttemptsInWindow), num(p.AttemptsTotal), num(p.VictimsInWindow), num(p.PreemptorsInWindow)))
	lines = append(lines, "", s.Header.Render(pad("INCOMING PODS BY QUEUE/EVENT", 44)+lpad("now", 9)+lpad("window", 9)))
	if len(st.Incoming) == 0 {
		lines = append(lines, s.Dim.Render("  none in the window"))
	}
	for _, in := range st.Incoming {
		lines = append(lines, pad("  "+in.Queue+" "+in.Event, 44)+lpad(rate(in.PerSecond, st.IntervalSeconds > 0), 9)+lpad(num(in.InWindow), 9))
	}
	return lines
}

func (m *Model) podLines() []string {
	s := m.styles
	var lines []string
	if m.filterShown() {
		if m.filtering {
			lines = append(lines, m.filter.View())
		} else {
			lines = append(lines, s.Dim.Render("filter: "+m.filter.Value()+" (esc clears)"))
		}
	}
	if m.o.Pods == nil {
		msg := m.o.NoPods
		if msg == "" {
			msg = "no cluster access: pending pods need a kubeconfig"
		}
		return append(lines, s.Dim.Render(msg))
	}
	if m.podsErr != nil {
		lines = append(lines, s.Bad.Render(m.podsErr.Error()))
	}
	if len(m.pods) == 0 {
		return append(lines, s.Dim.Render("no pending pods"))
	}
	lines = append(lines, m.groupLines()...)
	lines = append(lines, strings.Split(m.table.View(), "\n")...)
	return append(lines, m.detailLines()...)
}

// maxGroupLines bounds the pending groups listed above the pods.
const maxGroupLines = 4

// groupLines list the pending Workload API PodGroups above the pods, one
// line each (their pending members, the gang's minCount, the condition
// message the scheduler wrote, cut to the width), at most maxGroupLines,
// then a blank line; none without groups.
func (m *Model) groupLines() []string {
	if len(m.groups) == 0 || m.filterShown() {
		return nil
	}
	s := m.styles
	w := max(m.width-2, 10)
	lines := []string{s.Header.Render(pad("PENDING GROUP", 28) + pad("MEMBERS", 18) + "CONDITION")}
	for i, g := range m.groups {
		if i == maxGroupLines {
			lines = append(lines, s.Dim.Render(fmt.Sprintf("  … %d more", len(m.groups)-i)))
			break
		}
		members := fmt.Sprintf("%d pending", g.Pending)
		if g.Policy == "gang" {
			members += fmt.Sprintf(", min %d", g.MinCount)
		}
		cond := "not tried yet"
		switch {
		case g.Missing:
			cond = "PodGroup not found: its pods wait for it"
		case g.Message != "":
			cond = g.Message
		case g.Reason != "":
			cond = g.Reason
		}
		lines = append(lines, ansi.Truncate(pad(g.Key(), 27)+" "+pad(members, 17)+" "+cond, w, "…"))
	}
	return append(lines, "")
}

// minDetailHeight is the fewest lines the selected pod's message gets.
const minDetailHeight = 3

// detailHeight is how many lines the selected pod's message may take: a
// third of the panel, at least minDetailHeight.
func (m *Model) detailHeight() int { return max(minDetailHeight, m.bodyHeight()/3) }

// detailLines are the selected pod's last FailedScheduling message whole,
// as kube wrote it ("0/N nodes are available: ..." with the preemption
// text), wrapped to the width: the table's column shows only its short
// form. A message longer than the lines says that Enter explains the pod.
func (m *Model) detailLines() []string {
	pods := m.visiblePods()
	i := m.table.Cursor()
	if i < 0 || i >= len(pods) {
		return nil
	}
	msg := pods[i].Message
	if msg == "" {
		msg = reasonOf(pods[i])
	}
	if msg == "-" {
		msg = "not tried yet"
	}
	w := max(m.width-2, 10)
	dh := m.detailHeight()
	lines := strings.Split(ansi.Wrap(pods[i].Key()+": "+msg, w, ""), "\n")
	if len(lines) > dh {
		lines = lines[:dh]
		more := " … (enter: explain)"
		lines[dh-1] = ansi.Truncate(lines[dh-1], w-lipgloss.Width(more), "") + more
	}
	for i, l := range lines {
		lines[i] = m.styles.Dim.Render("  " + l)
	}
	return lines
}

// reasonOf is the short form of a pod's last FailedScheduling message.
func reasonOf(p top.PendingPod) string {
	switch {
	case p.Message != "":
		return report.ShortReason(p.Message)
	case p.Reason != "":
		return p.Reason
	}
	return "-"
}

func podColumns(width int) []table.Column {
	// Each cell has one column of padding on either side.
	avail := max(width-6, 30)
	podW := avail * 2 / 5
	ageW := 6
	return []table.Column{{Title: "POD", Width: podW}, {Title: "AGE", Width: ageW}, {Title: "LAST FAILEDSCHEDULING", Width: avail - podW - ageW}}
}

// refreshTable puts the visible pods into the table.
func (m *Model) refreshTable() {
	pods := m.visiblePods()
	rows := make([]table.Row, len(pods))
	for i, p := range pods {
		rows[i] = table.Row{p.Key(), duration.HumanDuration(p.Age), reasonOf(p)}
	}
	m.layout()
	m.table.SetRows(rows)
	if c := m.table.Cursor(); c >= len(rows) {
		m.table.SetCursor(max(len(rows)-1, 0))
	}
}

// nothingScrapedLines replace the panel while no scrape has succeeded:
// what was tried and what failed, wrapped whole, and how to point top at a
// scheduler.
func (m *Model) nothingScrapedLines() []string {
	s := m.styles
	w := max(m.width-2, 10)
	var lines []string
	for _, l := range wrapWords("Nothing to scrape at "+m.o.Source.String()+": "+m.lastErr.Error(), w) {
		lines = append(lines, s.Bad.Render(l))
	}
	for _, h := range m.o.NoSourceHint {
		for j, l := range wrapWords(h, w-2) {
			if j > 0 {
				l = "  " + l
			}
			lines = append(lines, l)
		}
	}
	return lines
}

func (m *Model) statusLine() string {
	s := m.styles
	var parts []string
	if m.paused {
		parts = append(parts, s.Warn.Render("paused (p resumes)"))
	}
	switch {
	case m.explaining && m.explainBusy:
		parts = append(parts, m.spinner.View()+" explaining "+m.explainKey+"...")
	case m.explaining && m.explainErr != nil:
		parts = append(parts, s.Bad.Render("explain: "+m.explainErr.Error()))
	}
	switch {
	case m.lastErr != nil:
		parts = append(parts, s.Bad.Render(fmt.Sprintf("✗ scrape failed %d×, retry in %s: %v", m.failures, shortDuration(m.retryIn), m.lastErr)))
	case m.stats == nil:
		parts = append(parts, m.spinner.View()+" scraping "+m.o.Source.String()+"...")
	default:
		st := m.stats
		ok := s.Good.Render("●") + " " + st.Time.Format("15:04:05") + fmt.Sprintf(" · every %s · %d samples", shortDuration(m.o.Interval), st.Samples)
		if !st.Scheduler {
			ok += " · " + s.Warn.Render("no scheduler_* metrics here")
		}
		if n := len(st.Warnings); n > 0 {
			ok += " · " + s.Warn.Render(fmt.Sprintf("%d malformed line(s) skipped", n))
		}
		parts = append(parts, ok)
	}
	return strings.Join(parts, " · ")
}
