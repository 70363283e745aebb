package pty

import "testing"

// TestFullScreenText: the alternate screen's last frame is kept when the
// child leaves it (what vim "printed"); a child that never used it has
// none.
func TestFullScreenText(t *testing.T) {
	s := NewScreen(40, 6, nil)
	defer s.Close()
	s.Feed([]byte("plain line\r\n"))
	if _, ok := s.FullScreenText(); ok {
		t.Fatal("a plain child reported a full screen")
	}
	s.Feed([]byte("\x1b[?1049h\x1b[H\x1b[2Jhello   \r\n~\r\n~\r\n\x1b[6;1H\"f\" 1L written"))
	if txt, ok := s.FullScreenText(); !ok || txt != "hello\n~\n~\n\n\n\"f\" 1L written" {
		t.Fatalf("on the alternate screen: %q %v", txt, ok)
	}
	s.Feed([]byte("\x1b[?1049l"))
	if txt, _ := s.FullScreenText(); txt != "hello\n~\n~\n\n\n\"f\" 1L written" {
		t.Errorf("after leaving it: %q", txt)
	}
	if rows := s.Text(); rows[0] != "plain line" {
		t.Errorf("the main screen is back: %q", rows)
	}
}
