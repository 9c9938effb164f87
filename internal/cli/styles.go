package cli

import (
	"io"
	"os"

	"charm.land/lipgloss/v2"
	"golang.org/x/term"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
)

// isTerminal reports whether w is a terminal (colours are for people only:
// pipes, files and tests get plain text). NO_COLOR turns colours off.
func isTerminal(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// isTTY reports whether w is a terminal, whatever NO_COLOR says.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalStyles are the colours of table output on a terminal.
func terminalStyles() report.Styles {
	render := func(s lipgloss.Style) func(string) string { return func(x string) string { return s.Render(x) } }
	return report.Styles{
		Title: render(lipgloss.NewStyle().Bold(true)),
		Good:  render(lipgloss.NewStyle().Foreground(lipgloss.Color("2")).Bold(true)),
		Bad:   render(lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)),
		Mark:  render(lipgloss.NewStyle().Foreground(lipgloss.Color("3"))),
		Dim:   render(lipgloss.NewStyle().Faint(true)),
	}
}
