package tui

import "charm.land/lipgloss/v2"

// styles are the UI's colours. bubbletea downsamples them to the
// terminal's profile (256 colours, 16, none with NO_COLOR or a dumb TERM).
type styles struct {
	Title, Header, Dim, Good, Bad, Warn, Spark, Bar, TabActive, TabInactive, Selected lipgloss.Style
}

func defaultStyles() styles {
	return styles{
		Title:       lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
		Header:      lipgloss.NewStyle().Bold(true),
		Dim:         lipgloss.NewStyle().Faint(true),
		Good:        lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		Bad:         lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		Warn:        lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		Spark:       lipgloss.NewStyle().Foreground(lipgloss.Color("4")),
		Bar:         lipgloss.NewStyle().Foreground(lipgloss.Color("5")),
		TabActive:   lipgloss.NewStyle().Bold(true).Reverse(true).Padding(0, 1),
		TabInactive: lipgloss.NewStyle().Padding(0, 1),
		Selected:    lipgloss.NewStyle().Bold(true).Reverse(true),
	}
}
