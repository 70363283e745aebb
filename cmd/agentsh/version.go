package main

import (
	"runtime/debug"
	"strings"
)

// buildVersion is set by a release build
// (-ldflags "-X main.buildVersion=v1.2.3"); else version asks the build
// information.
var buildVersion = ""

// version is what --version prints after "agentsh ": the release or module
// version, else "devel", followed by the commit the binary was built from
// and whether the tree had uncommitted changes, when Go recorded them.
func version() string {
	v := buildVersion
	info, ok := debug.ReadBuildInfo()
	if v == "" {
		v = "devel"
		if ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	if !ok {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" || strings.Contains(v, rev[:min(12, len(rev))]) {
		return v
	}
	v += " (" + rev[:min(12, len(rev))]
	if modified == "true" {
		v += ", modified"
	}
	return v + ")"
}
