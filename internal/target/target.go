// Package target names where a conversation's commands run: this machine
// (local), a container (docker://, podman://), an SSH host (ssh://), a
// Kubernetes pod (k8s://) or anything else that gives a stdio stream into
// the target (exec: and a JSON argv). It parses the URIs users write and
// builds the argv of the engine they already run (docker, podman, ssh,
// kubectl) that starts a program there with its stdin and stdout joined to
// ours; agentsh brings no transport of its own.
package target

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Kind is the sort of target.
type Kind string

// The kinds of target.
const (
	Local  Kind = "local"
	Docker Kind = "docker"
	Podman Kind = "podman"
	SSH    Kind = "ssh"
	K8s    Kind = "k8s"
	Exec   Kind = "exec"
)

// Target is a parsed target URI.
type Target struct {
	Kind Kind
	// Container is the container of docker:// and podman://, and the
	// container in the pod of k8s:// ("" = the pod's default).
	Container string
	// User, Host and Port are ssh://'s ("" and 0: ssh's own defaults and
	// the user's ssh config).
	User string
	Host string
	Port int
	// Context, Namespace and Pod are k8s://'s ("" context or namespace:
	// kubectl's current ones).
	Context   string
	Namespace string
	Pod       string
	// Argv is exec:'s command, which gives a stdio stream into the target.
	Argv []string
}

var (
	// containerName is what docker and podman accept as a container's name
	// or id.
	containerName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	// dnsLabel is a Kubernetes namespace or container name (RFC 1123 label).
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// dnsSubdomain is a Kubernetes pod name (RFC 1123 subdomain).
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// Parse reads a target URI: "" or "local", docker://CONTAINER,
// podman://CONTAINER, ssh://[user@]host[:port],
// k8s://[context/][namespace/]pod[/container] and exec:["argv", …].
//
// k8s:// counts its parts: pod; namespace/pod; context/namespace/pod;
// context/namespace/pod/container. An empty context or namespace stands
// for kubectl's current one, so k8s:////web/app is the pod web's
// container app in the current namespace.
func Parse(uri string) (Target, error) {
	uri = strings.TrimSpace(uri)
	if uri == "" || uri == "local" {
		return Target{Kind: Local}, nil
	}
	if rest, ok := strings.CutPrefix(uri, "exec:"); ok {
		return parseExec(uri, rest)
	}
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return Target{}, badURI(uri, "want local, docker://, podman://, ssh://, k8s:// or exec:[…]")
	}
	switch Kind(scheme) {
	case Docker, Podman:
		if !containerName.MatchString(rest) {
			return Target{}, badURI(uri, "want "+scheme+"://CONTAINER, a container's name or id")
		}
		return Target{Kind: Kind(scheme), Container: rest}, nil
	case SSH:
		return parseSSH(uri)
	case K8s:
		return parseK8s(uri, rest)
	}
	return Target{}, badURI(uri, "unknown scheme "+strconv.Quote(scheme)+": want docker, podman, ssh, k8s or exec")
}

func badURI(uri, why string) error {
	return fmt.Errorf("target %s: %s", strconv.Quote(uri), why)
}

func parseExec(uri, rest string) (Target, error) {
	var argv []string
	if err := json.Unmarshal([]byte(rest), &argv); err != nil || len(argv) == 0 {
		return Target{}, badURI(uri, `want exec:["program", "arg", …], a JSON array of strings`)
	}
	for _, a := range argv {
		if a == "" || strings.IndexByte(a, 0) >= 0 {
			return Target{}, badURI(uri, "an empty argument or a NUL byte in exec's argv")
		}
	}
	return Target{Kind: Exec, Argv: argv}, nil
}

func parseSSH(uri string) (Target, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return Target{}, badURI(uri, "want ssh://[user@]host[:port]")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return Target{}, badURI(uri, "want ssh://[user@]host[:port], without a path or query")
	}
	t := Target{Kind: SSH, Host: u.Hostname()}
	if strings.Contains(t.Host, ":") && !strings.HasPrefix(u.Host, "[") {
		return Target{}, badURI(uri, "an IPv6 host goes in brackets: ssh://[::1]:22")
	}
	if t.Host == "" || strings.HasPrefix(t.Host, "-") || strings.ContainsAny(t.Host, " \t\n'\"\\") {
		return Target{}, badURI(uri, "want ssh://[user@]host[:port], with a host")
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return Target{}, badURI(uri, "no password in the URI: ssh asks, or use a key")
		}
		t.User = u.User.Username()
		if t.User == "" || strings.HasPrefix(t.User, "-") || strings.ContainsAny(t.User, " \t\n'\"\\") {
			return Target{}, badURI(uri, "the user is empty or not a user name")
		}
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, badURI(uri, "the port must be 1–65535")
		}
		t.Port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return Target{}, badURI(uri, "the port must be 1–65535")
	}
	return t, nil
}

func parseK8s(uri, rest string) (Target, error) {
	parts := strings.Split(rest, "/")
	t := Target{Kind: K8s}
	switch len(parts) {
	case 1:
		t.Pod = parts[0]
	case 2:
		t.Namespace, t.Pod = parts[0], parts[1]
	case 3:
		t.Context, t.Namespace, t.Pod = parts[0], parts[1], parts[2]
	case 4:
		t.Context, t.Namespace, t.Pod, t.Container = parts[0], parts[1], parts[2], parts[3]
	default:
		return Target{}, badURI(uri, "want k8s://[context/][namespace/]pod[/container]")
	}
	switch {
	case len(t.Pod) > 253 || !dnsSubdomain.MatchString(t.Pod):
		return Target{}, badURI(uri, "the pod must be a Kubernetes name (lower-case letters, digits, - and .)")
	case t.Namespace != "" && (len(t.Namespace) > 63 || !dnsLabel.MatchString(t.Namespace)):
		return Target{}, badURI(uri, "the namespace must be a Kubernetes name (lower-case letters, digits and -)")
	case t.Container != "" && (len(t.Container) > 63 || !dnsLabel.MatchString(t.Container)):
		return Target{}, badURI(uri, "the container must be a Kubernetes name (lower-case letters, digits and -)")
	case len(parts) == 4 && t.Container == "":
		return Target{}, badURI(uri, "an empty container: leave the last part out for the pod's default")
	case strings.HasPrefix(t.Context, "-") || strings.ContainsAny(t.Context, " \t\n"):
		return Target{}, badURI(uri, "the context is not a kubeconfig context name")
	}
	return t, nil
}

// String is the target as a URI that Parse reads back to the same Target.
func (t Target) String() string {
	switch t.Kind {
	case Docker, Podman:
		return string(t.Kind) + "://" + t.Container
	case SSH:
		u := url.URL{Scheme: "ssh", Host: t.Host}
		if strings.Contains(t.Host, ":") {
			u.Host = "[" + t.Host + "]"
		}
		if t.Port != 0 {
			u.Host += ":" + strconv.Itoa(t.Port)
		}
		if t.User != "" {
			u.User = url.User(t.User)
		}
		return u.String()
	case K8s:
		parts := []string{t.Context, t.Namespace, t.Pod}
		switch {
		case t.Container != "":
			parts = append(parts, t.Container)
		case t.Context == "" && t.Namespace == "":
			parts = parts[2:]
		case t.Context == "":
			parts = parts[1:]
		}
		return "k8s://" + strings.Join(parts, "/")
	case Exec:
		b, _ := json.Marshal(t.Argv)
		return "exec:" + string(b)
	}
	return "local"
}

// ErrLocal is Command's error for the local target, which needs no engine.
var ErrLocal = errors.New("the local target runs commands itself")

// Command is the argv that runs argv on the target with its stdin and
// stdout joined to the caller's: engine is the engine's argv prefix
// (nil: docker, podman, ssh or kubectl as the kind says; the setting
// target.ssh gives ["ssh", "-F", "cfg"]). ssh hands the remote shell one
// string, so each word is quoted for it.
func (t Target) Command(engine []string, argv ...string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("target command: no program")
	}
	pre := func(def string) []string {
		if len(engine) > 0 {
			return append([]string(nil), engine...)
		}
		return []string{def}
	}
	var out []string
	switch t.Kind {
	case Docker, Podman:
		out = append(pre(string(t.Kind)), "exec", "-i", t.Container)
		out = append(out, argv...)
	case SSH:
		out = pre("ssh")
		if t.Port != 0 {
			out = append(out, "-p", strconv.Itoa(t.Port))
		}
		if t.User != "" {
			out = append(out, "-l", t.User)
		}
		words := make([]string, len(argv))
		for i, a := range argv {
			words[i] = shellQuote(a)
		}
		out = append(out, "--", t.Host, strings.Join(words, " "))
	case K8s:
		out = pre("kubectl")
		if t.Context != "" {
			out = append(out, "--context", t.Context)
		}
		if t.Namespace != "" {
			out = append(out, "-n", t.Namespace)
		}
		out = append(out, "exec", "-i", t.Pod)
		if t.Container != "" {
			out = append(out, "-c", t.Container)
		}
		out = append(out, "--")
		out = append(out, argv...)
	case Exec:
		out = append(append([]string(nil), t.Argv...), argv...)
	default:
		return nil, ErrLocal
	}
	return out, nil
}

// shellQuote quotes s for a POSIX shell: as it is when it is plainly a
// word, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
