package session

import (
	"os"
	"strings"
	"testing"
)

func TestEncodeCwd(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	cases := []struct{ in, want string }{
		{"/home/u", "-"},
		{"/home/u/", "-"},
		{"/home/u/src/app", "-src-app"},
		{"/home/u/src/app/", "-src-app"},
		{"/home/u/src/../src/app", "-src-app"},
		{"/srv/x", "--srv-x--"},
		{"/", "----"},
		{"/home/user2/p", "--home-user2-p--"}, // shares a prefix with HOME but is not under it
		{"/home", "--home--"},
		{"/home/u/my dir/a:b", "-my-dir-a-b"},
		{"/home/u/caf\u00e9", "-caf-"}, // one dash per character, not per byte
		{"/home/u/.config/v1.2_x-y", "-.config-v1.2_x-y"},
		{"/tmp/a\\b*c?d", "--tmp-a-b-c-d--"},
	}
	for _, c := range cases {
		if got := EncodeCwd(c.in); got != c.want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEncodeCwdHomeEdgeCases(t *testing.T) {
	t.Setenv("HOME", "/")
	if got, want := EncodeCwd("/srv/x"), "--srv-x--"; got != want {
		t.Errorf("HOME=/: EncodeCwd(/srv/x) = %q, want %q", got, want)
	}
	t.Setenv("HOME", "")
	if got, want := EncodeCwd("/home/u/src"), "--home-u-src--"; got != want {
		t.Errorf("no HOME: EncodeCwd = %q, want %q", got, want)
	}
	t.Setenv("HOME", "/home/u/")
	if got, want := EncodeCwd("/home/u/src"), "-src"; got != want {
		t.Errorf("HOME with trailing slash: EncodeCwd = %q, want %q", got, want)
	}
}

func TestEncodeCwdRelative(t *testing.T) {
	t.Setenv("HOME", "/nonexistent-home")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := EncodeCwd("."), EncodeCwd(wd); got != want {
		t.Errorf("EncodeCwd(.) = %q, want same as EncodeCwd(%q) = %q", got, wd, want)
	}
}

func TestEncodeCwdLongPathsStayShortAndDistinct(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	long := "/home/u/" + strings.Repeat("segment/", 60)
	a, b := EncodeCwd(long+"a"), EncodeCwd(long+"b")
	if len(a) > 200 || len(b) > 200 {
		t.Fatalf("encoded lengths %d, %d exceed 200", len(a), len(b))
	}
	if a == b {
		t.Fatalf("long paths differing at the end collide: %q", a)
	}
	if !strings.HasPrefix(a, "-segment-segment-") {
		t.Errorf("long encoding lost its readable prefix: %q", a)
	}
	if strings.ContainsAny(a, "/\\") {
		t.Errorf("encoding contains a separator: %q", a)
	}
}

func TestSessionsDirAndExecArtifactsDir(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_DATA_HOME", "/data")
	if got, want := SessionsDir("/home/u/src/app"), "/data/agentsh/sessions/-src-app"; got != want {
		t.Errorf("SessionsDir = %q, want %q", got, want)
	}
	if got, want := ExecArtifactsDir("/srv/x"), "/data/agentsh/sessions/--srv-x--/exec"; got != want {
		t.Errorf("ExecArtifactsDir = %q, want %q", got, want)
	}
}
