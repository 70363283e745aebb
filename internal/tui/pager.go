package tui

import (
	tea "charm.land/bubbletea/v2"

	"agentsh/internal/tui/pager"
)

// pagerLayer is the pager (package pager) as a layer: it covers the window
// and takes all input until it closes.
type pagerLayer struct{ p *pager.Pager }

// openPager opens path in the pager with the key map's pager keys, laid
// out for a width × height window; title is shown in the header.
func openPager(path, title string, width, height int) (*pagerLayer, error) {
	p, err := pager.Open(path, title, pager.KeyMap{Pager: keys.Pager, Prompt: keys.Prompt}, width, height)
	if err != nil {
		return nil, err
	}
	return &pagerLayer{p: p}, nil
}

// update implements layer: when the pager closes (q) its file is closed
// and it leaves the stack.
func (l *pagerLayer) update(msg tea.Msg) (action, tea.Cmd) {
	if l.p.Update(msg) {
		_ = l.p.Close()
		return closeLayer{}, nil
	}
	return nil, nil
}

// view implements layer.
func (l *pagerLayer) view(width, height int, st *styles) surface {
	return surface{content: l.p.View(width, height, pager.Styles{Title: st.overlayTitle, Dim: st.dim,
		Warning: st.warning, Error: st.errorText, NoColor: st.theme.NoColor})}
}

// covers implements layer.
func (l *pagerLayer) covers() bool { return true }

// stop implements stopper: quitting closes the file.
func (l *pagerLayer) stop() { _ = l.p.Close() }
