package pager

import (
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is every key the pager answers. The TUI keeps it in its key map
// (so /help lists it and a rebinding reaches the pager) and hands it to
// Open; DefaultKeyMap is where the keys are named.
type KeyMap struct {
	Pager  Keys
	Prompt PromptKeys
}

// Keys move through the file.
type Keys struct {
	Close, Up, Down, PageUp, PageDown, HalfUp, HalfDown, Top, Bottom,
	Left, Right, Column0, Wrap, Search, Next, Prev key.Binding
}

// PromptKeys edit the search prompt.
type PromptKeys struct {
	Cancel, Submit, Erase, Clear key.Binding
}

func bind(help, desc string, ks ...string) key.Binding {
	return key.NewBinding(key.WithKeys(ks...), key.WithHelp(help, desc))
}

// DefaultKeyMap is the pager's keys, less's where less has one.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Pager: Keys{
			Close:    bind("q", "close", "q", "esc", "ctrl+c"),
			Up:       bind("↑", "line up", "up", "k", "ctrl+p"),
			Down:     bind("↓", "line down", "down", "j", "ctrl+n", "enter"),
			PageUp:   bind("pgup", "page up", "pgup", "b"),
			PageDown: bind("pgdn", "page down", "pgdown", "space", "f"),
			HalfUp:   bind("ctrl+u", "half a page up", "ctrl+u"),
			HalfDown: bind("ctrl+d", "half a page down", "ctrl+d"),
			Top:      bind("g", "top", "home", "g"),
			Bottom:   bind("G", "bottom", "end", "G", "shift+g"),
			Left:     bind("h", "scroll left", "left", "h"),
			Right:    bind("l", "scroll right", "right", "l"),
			Column0:  bind("0", "first column", "0"),
			Wrap:     bind("w", "wrap", "w"),
			Search:   bind("/", "search", "/"),
			Next:     bind("n", "next", "n"),
			Prev:     bind("N", "prev", "N", "shift+n"),
		},
		Prompt: PromptKeys{
			Cancel: bind("esc", "cancels the search", "esc", "ctrl+c", "ctrl+g"),
			Submit: bind("enter", "searches", "enter"),
			Erase:  bind("backspace", "deletes back", "backspace", "ctrl+h"),
			Clear:  bind("ctrl+u", "clears", "ctrl+u"),
		},
	}
}

// keyName is a key press as the bindings spell it (tea.KeyPressMsg's
// String), worked out once per key instead of once per binding.
type keyName string

func (k keyName) String() string { return string(k) }

// is reports whether key k is one of the bindings'.
func is(k keyName, bs ...key.Binding) bool { return key.Matches(k, bs...) }

// name is how help texts name b's keys.
func name(b key.Binding) string { return b.Help().Key }

// help is the pager's footer: its main keys and what they do.
func (km KeyMap) help() string {
	pk := km.Pager
	entries := []key.Help{
		{Key: name(pk.Up) + name(pk.Down) + " " + name(pk.PageUp) + "/" + name(pk.PageDown) + " " +
			name(pk.Top) + "/" + name(pk.Bottom), Desc: "scroll"},
		pk.Search.Help(),
		{Key: name(pk.Next) + "/" + name(pk.Prev), Desc: pk.Next.Help().Desc + "/" + pk.Prev.Help().Desc},
		pk.Wrap.Help(),
		pk.Close.Help(),
	}
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.Key + " " + e.Desc
	}
	return strings.Join(parts, " · ")
}
