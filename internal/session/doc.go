// Package session is the record of a conversation, what is on disk: its
// messages in the reference's wire shapes (messages.go, wire.go; older files
// still read), the JSONL session file written from the first message with an
// id on every entry and read line by line (store.go, jsonl.go), the model,
// name and compaction entries (modelentries.go, compaction.go), the list of
// a folder's sessions for the pickers (list.go), where sessions live
// (paths.go) and the artifact folder that receives spilled tool output
// (artifacts.go). It neither runs anything nor reads settings: a running
// conversation is internal/agent's.
package session
