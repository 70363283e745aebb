package sandbox

import "testing"

func TestParseMode(t *testing.T) {
	for _, s := range []string{"workspace-write", "read-only", "off", " off "} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseMode("workspace"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

// TestPolicyKey: shells are shared only under equal policies; the order of
// the path lists does not matter, and no policy, off and nil are one.
func TestPolicyKey(t *testing.T) {
	var none *Policy
	a := &Policy{Mode: WorkspaceWrite, Workdir: "/w", Writable: []string{"/a", "/b/"}, DenyRead: []string{"/x"}}
	b := &Policy{Mode: WorkspaceWrite, Workdir: "/w", Writable: []string{"/b", "/a"}, DenyRead: []string{"/x"}}
	if a.Key() != b.Key() {
		t.Errorf("same policy, different keys: %q %q", a.Key(), b.Key())
	}
	if none.Key() != (&Policy{Mode: Off, Workdir: "/w"}).Key() || none.Enabled() {
		t.Error("nil and off differ")
	}
	for _, c := range []*Policy{
		{Mode: ReadOnly, Workdir: "/w", Writable: []string{"/a", "/b"}, DenyRead: []string{"/x"}},
		{Mode: WorkspaceWrite, Workdir: "/v", Writable: []string{"/a", "/b"}, DenyRead: []string{"/x"}},
		{Mode: WorkspaceWrite, Workdir: "/w", Writable: []string{"/a", "/b"}, DenyRead: []string{"/x"}, Network: true},
		{Mode: WorkspaceWrite, Workdir: "/w", Writable: []string{"/a"}, DenyRead: []string{"/b", "/x"}},
		none,
	} {
		if c.Key() == a.Key() {
			t.Errorf("%+v shares a's key %q", c, a.Key())
		}
	}
}

// TestPolicyKeyAllowRead: what is given back beneath DenyRead is part of
// the identity too.
func TestPolicyKeyAllowRead(t *testing.T) {
	a := &Policy{Mode: WorkspaceWrite, Workdir: "/w", DenyRead: []string{"/d"}}
	b := &Policy{Mode: WorkspaceWrite, Workdir: "/w", DenyRead: []string{"/d"}, AllowRead: []string{"/d/s/a"}}
	if a.Key() == b.Key() {
		t.Errorf("AllowRead left out of the key: %q", a.Key())
	}
}
