// Package tui is the terminal UI of `kubectl sched top` (bubbletea,
// lipgloss and bubbles v2): a Model that scrapes a top.Source every
// interval, keeps a top.Window and renders top.Stats as panels — the queue
// with sparklines and its fill and drain rates, latency quantiles, why pods
// wait, and the pending pods, from which Enter opens the explain view.
//
// The model never touches the terminal itself: bubbletea does, and
// degrades colours to what the terminal supports. Update and View are pure
// given the messages, so tests drive them at fixed sizes with recorded
// scrapes and compare the ANSI-stripped views with golden files.
package tui
