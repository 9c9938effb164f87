package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
)

// scrapeTimeout bounds one scrape.
const scrapeTimeout = 10 * time.Second

func (m *Model) scrapeCmd() tea.Cmd {
	src, ctx, now := m.o.Source, m.o.Context, m.now
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
		defer cancel()
		s, err := src.Scrape(ctx)
		return scrapeMsg{sample: s, err: err, at: now()}
	}
}

func (m *Model) tickCmd(d time.Duration) tea.Cmd {
	seq := m.seq
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{seq: seq} })
}

func (m *Model) podsCmd() tea.Cmd {
	if m.o.Pods == nil || m.podsInFlight {
		return nil
	}
	m.podsInFlight = true
	list, groups, ctx := m.o.Pods, m.o.Groups, m.o.Context
	var profiles []string
	if m.stats != nil {
		profiles = m.stats.Profiles
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
		defer cancel()
		pods, err := list(ctx, profiles)
		if err != nil || groups == nil {
			return podsMsg{pods: pods, err: err}
		}
		gs, err := groups(ctx, pods)
		return podsMsg{pods: pods, groups: gs, err: err}
	}
}

func (m *Model) explainCmd(namespace, name string) tea.Cmd {
	explain, ctx, width := m.o.Explain, m.o.Context, m.width
	return func() tea.Msg {
		text, err := explain(ctx, namespace, name, width)
		return explainMsg{key: namespace + "/" + name, text: text, err: err}
	}
}
