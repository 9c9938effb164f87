package tui

import "charm.land/bubbles/v2/key"

// keyMap is every binding, for matching and for the help view.
type keyMap struct {
	Quit, Tab, BackTab, Pause, Filter, Help, Up, Down, Enter, Back key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Tab:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel")),
		BackTab: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous panel")),
		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter pods")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Enter:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "explain pod")),
		Back:    key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Tab, k.Pause, k.Filter, k.Enter, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Tab, k.BackTab, k.Pause},
		{k.Up, k.Down, k.Enter, k.Back},
		{k.Filter, k.Help, k.Quit},
	}
}
