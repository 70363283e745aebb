package target

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := []struct {
		uri  string
		want Target
	}{
		{"", Target{Kind: Local}},
		{"local", Target{Kind: Local}},
		{"docker://dev", Target{Kind: Docker, Container: "dev"}},
		{"podman://3f2a9c.b_1-x", Target{Kind: Podman, Container: "3f2a9c.b_1-x"}},
		{"ssh://box", Target{Kind: SSH, Host: "box"}},
		{"ssh://me@box.example:2222", Target{Kind: SSH, User: "me", Host: "box.example", Port: 2222}},
		{"ssh://[::1]:22", Target{Kind: SSH, Host: "::1", Port: 22}},
		{"ssh://box/", Target{Kind: SSH, Host: "box"}},
		{"k8s://web-0", Target{Kind: K8s, Pod: "web-0"}},
		{"k8s://team/web-0", Target{Kind: K8s, Namespace: "team", Pod: "web-0"}},
		{"k8s://prod/team/web-0", Target{Kind: K8s, Context: "prod", Namespace: "team", Pod: "web-0"}},
		{"k8s://prod/team/web-0/app", Target{Kind: K8s, Context: "prod", Namespace: "team", Pod: "web-0", Container: "app"}},
		{"k8s:////web.a/app", Target{Kind: K8s, Pod: "web.a", Container: "app"}},
		{`exec:["podman","exec","-i","c1"]`, Target{Kind: Exec, Argv: []string{"podman", "exec", "-i", "c1"}}},
	}
	for _, c := range good {
		got, err := Parse(c.uri)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.uri, got, err, c.want)
			continue
		}
		back, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("Parse(%q.String() = %q) = %+v, %v", c.uri, got.String(), back, err)
		}
	}
	bad := map[string]string{
		"docker":                            "want local, docker://",
		"docker://":                         "want docker://CONTAINER",
		"docker://-rm":                      "want docker://CONTAINER",
		"podman://a b":                      "want podman://CONTAINER",
		"lxc://x":                           `unknown scheme "lxc"`,
		"ssh://":                            "with a host",
		"ssh://-oProxyCommand=x":            "with a host",
		"ssh://-x@box":                      "not a user name",
		"ssh://me:pw@box":                   "no password",
		"ssh://box:0":                       "port must be 1–65535",
		"ssh://box:70000":                   "port must be 1–65535",
		"ssh://box:":                        "port must be 1–65535",
		"ssh://box/home":                    "without a path",
		"ssh://box?x=1":                     "without a path",
		"k8s://":                            "the pod must be",
		"k8s://Web":                         "the pod must be",
		"k8s://a/b/c/d/e":                   "want k8s://",
		"k8s://-ctx/ns/pod":                 "the context",
		"k8s://ctx/NS/pod":                  "the namespace",
		"k8s://ctx/ns/pod/":                 "an empty container",
		"k8s://ctx/ns/pod/App":              "the container",
		"exec:":                             "JSON array",
		"exec:[]":                           "JSON array",
		`exec:["ok",""]`:                    "empty argument",
		`exec:"podman"`:                     "JSON array",
		"k8s://" + strings.Repeat("a", 254): "the pod must be",
	}
	for uri, want := range bad {
		if got, err := Parse(uri); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "target ") {
			t.Errorf("Parse(%q) = %+v, %v; want an error naming the target and %q", uri, got, err, want)
		}
	}
}

func TestCommand(t *testing.T) {
	cases := []struct {
		uri    string
		engine []string
		want   []string
	}{
		{"docker://dev", nil, []string{"docker", "exec", "-i", "dev", "agentsh", "serve"}},
		{"podman://dev", []string{"podman", "--remote"}, []string{"podman", "--remote", "exec", "-i", "dev", "agentsh", "serve"}},
		{"ssh://me@box:2222", []string{"ssh", "-F", "cfg"}, []string{"ssh", "-F", "cfg", "-p", "2222", "-l", "me", "--", "box", "agentsh serve"}},
		{"ssh://box", nil, []string{"ssh", "--", "box", "agentsh serve"}},
		{"k8s://prod/team/web-0/app", nil, []string{"kubectl", "--context", "prod", "-n", "team", "exec", "-i", "web-0", "-c", "app", "--", "agentsh", "serve"}},
		{"k8s://web-0", nil, []string{"kubectl", "exec", "-i", "web-0", "--", "agentsh", "serve"}},
		{`exec:["podman","exec","-i","c1"]`, nil, []string{"podman", "exec", "-i", "c1", "agentsh", "serve"}},
	}
	for _, c := range cases {
		tg, err := Parse(c.uri)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tg.Command(c.engine, "agentsh", "serve")
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Command = %q, %v; want %q", c.uri, got, err, c.want)
		}
	}
	if _, err := (Target{Kind: Local}).Command(nil, "true"); err != ErrLocal {
		t.Errorf("local Command = %v, want ErrLocal", err)
	}
	if _, err := (Target{Kind: Docker, Container: "x"}).Command(nil); err == nil {
		t.Error("Command without a program made an argv")
	}
}

// ssh hands the remote shell one string: each word must reach the program
// as it was, whatever it holds. The remote side is a real POSIX shell here.
func TestSSHWordsSurviveTheRemoteShell(t *testing.T) {
	words := []string{"printf", `%s\n`, "plain", "two words", "it's", `"dq"`, "$HOME", "`id`", "a;b", "*", "", "tab\there", "new\nline", "-n", "é ☃"}
	tg, _ := Parse("ssh://box")
	argv, err := tg.Command(nil, words...)
	if err != nil {
		t.Fatal(err)
	}
	remote := argv[len(argv)-1]
	out, err := exec.Command("sh", "-c", remote).Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", remote, err)
	}
	if want := strings.Join(words[2:], "\n") + "\n"; string(out) != want {
		t.Errorf("through the shell:\n got %q\nwant %q", out, want)
	}
}

// exec: runs the named program with the command appended: a real stream.
func TestExecTargetRuns(t *testing.T) {
	tg, err := Parse(`exec:["env","AGENTSH_TARGET_TEST=on the target"]`)
	if err != nil {
		t.Fatal(err)
	}
	argv, err := tg.Command(nil, "sh", "-c", `printf '%s' "$AGENTSH_TARGET_TEST"`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil || string(out) != "on the target" {
		t.Fatalf("%q: %q, %v", argv, out, err)
	}
}

// Parse takes what a settings file or a flag says: it never panics, and
// what it accepts prints back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "local", "docker://dev", "ssh://me@[::1]:22", "k8s://a/b/c/d", `exec:["x","y"]`, "ssh://%zz", "k8s:////p/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		tg, err := Parse(uri)
		if err != nil {
			return
		}
		back, err := Parse(tg.String())
		if err != nil || !reflect.DeepEqual(back, tg) {
			t.Fatalf("Parse(%q) = %+v; its String %q reads back as %+v, %v", uri, tg, tg.String(), back, err)
		}
		if tg.Kind != Local {
			if _, err := tg.Command(nil, "true"); err != nil {
				t.Fatalf("Command of %+v: %v", tg, err)
			}
		}
	})
}
