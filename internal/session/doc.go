// Package session owns per-working-directory state of agentsh: where data and
// configuration live on disk, the artifact folder that receives spilled tool
// output, the merged user/project settings, and the conversation itself:
// its messages (messages.go), its JSONL session file (store.go) and the
// AgentSession that runs the user's bang commands (agent.go).
package session
