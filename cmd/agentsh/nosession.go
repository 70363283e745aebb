package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"agentsh/internal/agent"
	"agentsh/internal/guard"
)

// tempArtifactsPrefix names the folders that keep the artifacts of a
// --no-session session while agentsh runs.
const tempArtifactsPrefix = "agentsh-artifacts-"

// removeStaleArtifacts removes, once per process, the folders a killed
// agentsh left.
var removeStaleArtifacts = sync.OnceFunc(func() { guard.RemoveStale(os.TempDir(), tempArtifactsPrefix) })

// tempArtifacts gives a session without a store (--no-session) an artifact
// folder in the temporary directory, so truncated output keeps its
// artifact:// link, ctrl+g and `read artifact://N` for the life of the
// process; the returned func removes it. The folder is named after this
// process, so one left by a killed agentsh is removed by the next start.
// When it cannot be made, the session goes on without artifacts, as it
// would on a full disk.
func tempArtifacts(agent *agent.AgentSession, stderr io.Writer) (remove func()) {
	removeStaleArtifacts()
	dir, err := guard.MkdirOwned(os.TempDir(), tempArtifactsPrefix)
	if err != nil {
		fmt.Fprintf(stderr, "agentsh: no folder for full outputs: %v\n", err)
		return func() {}
	}
	agent.SetArtifactsDir(dir)
	return func() { _ = os.RemoveAll(dir) }
}
