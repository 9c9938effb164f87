package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Text helpers of the views: words wrapped to a width, sparklines, rates,
// counts and durations.

// wrapWords wraps plain text at spaces only (a flag such as
// --scheduler-pod stays whole); a word wider than w is cut into pieces.
func wrapWords(text string, w int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		for ansi.StringWidth(word) > w {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			head := ansi.Truncate(word, w, "")
			lines, word = append(lines, head), word[len(head):]
		}
		switch {
		case line == "":
			line = word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// sparkline draws the last width values scaled to their maximum.
func sparkline(vals []float64, width int) string {
	if width <= 0 || len(vals) == 0 {
		return ""
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	const ticks = "▁▂▃▄▅▆▇█"
	glyphs := []rune(ticks)
	var most float64
	for _, v := range vals {
		most = math.Max(most, v)
	}
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if most > 0 && v > 0 {
			i = int(math.Round(v / most * float64(len(glyphs)-1)))
		}
		b.WriteRune(glyphs[max(min(i, len(glyphs)-1), 0)])
	}
	return b.String()
}

func rate(v float64, have bool) string {
	if !have {
		return "-"
	}
	return fmt.Sprintf("%.1f/s", v)
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// seconds formats a latency; nil (no observations) is "-".
func seconds(v *float64) string {
	switch {
	case v == nil:
		return "-"
	case *v < 1e-3:
		return fmt.Sprintf("%.0fµs", *v*1e6)
	case *v < 1:
		return fmt.Sprintf("%.1fms", *v*1e3)
	default:
		return fmt.Sprintf("%.2fs", *v)
	}
}

func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Second).String(), "0s")
}

// pad and lpad pad plain text to a width, truncating with an ellipsis.
func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(w-lipgloss.Width(s), 0))
}

func lpad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return strings.Repeat(" ", max(w-lipgloss.Width(s), 0)) + s
}

// spread puts left and right on one line of width w.
func spread(left, right string, w int) string {
	gap := w - lipgloss.Width(left) - lipgloss.Width(right)
	if right == "" || gap < 1 {
		return left
	}
	return left + strings.Repeat(" ", gap) + right
}

func fitHeight(lines []string, h int) []string {
	if len(lines) > h {
		return lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}

// fit cuts or pads the lines to exactly w x h.
func fit(lines []string, w, h int) string {
	lines = fitHeight(lines, h)
	for i, l := range lines {
		l = ansi.Truncate(l, w, "")
		lines[i] = l + strings.Repeat(" ", max(w-lipgloss.Width(l), 0))
	}
	return strings.Join(lines, "\n")
}
