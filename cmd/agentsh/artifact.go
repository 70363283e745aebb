package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"agentsh/internal/session"
)

const artifactUsage = "usage: agentsh artifact [--session ID|PATH] N\n"

// runArtifact prints artifact N: of the session given with --session, else
// of the folder of this directory written last (a session's, running or
// not, or `agentsh exec`'s), so the artifact://N just shown is the one read.
func runArtifact(args []string, stdout, stderr io.Writer) int {
	var sessionArg, ref string
	refs := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--session":
			if i+1 >= len(args) {
				fmt.Fprint(stderr, "agentsh artifact: --session needs a session id or path\n"+artifactUsage)
				return 2
			}
			i++
			sessionArg = args[i]
		case strings.HasPrefix(a, "--session="):
			sessionArg = strings.TrimPrefix(a, "--session=")
		default:
			ref = a
			refs++
		}
	}
	if refs != 1 {
		fmt.Fprint(stderr, "agentsh artifact: "+artifactUsage)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	if _, err := session.ParseArtifactURL(ref); err != nil {
		return fail(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	dir, where := session.ExecArtifactsDir(wd), ""
	if sessionArg != "" {
		p, err := session.Find(wd, sessionArg)
		if err != nil {
			return fail(err)
		}
		dir = session.ArtifactsDirFor(p)
	} else {
		src, err := session.NewestArtifacts(wd)
		if err != nil && !errors.Is(err, session.ErrNoArtifacts) {
			return fail(err)
		}
		if err == nil {
			dir = src.Dir
			if src.SessionID != "" {
				where = " (read in session " + src.SessionID + ", the last to keep one here; --session ID reads another)"
			}
		}
	}
	path, err := session.NewArtifactManager(dir).Resolve(ref)
	if err != nil {
		var nf *session.ArtifactNotFoundError
		if errors.As(err, &nf) {
			return fail(errors.New(err.Error() + where))
		}
		return fail(err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	if _, err := io.Copy(stdout, f); err != nil && !errors.Is(err, syscall.EPIPE) {
		return fail(err)
	}
	return 0
}
