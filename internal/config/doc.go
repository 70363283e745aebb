// Package config is agentsh's settings: the user's and the project's
// settings.json merged into typed Settings (settings.go) with FILE:LINE:COL
// errors, followed live as the files change (LiveSettings), the project's
// trust (trust.go: what a project's file loosens needs the user's yes; the
// trusted folders and "always outside" commands), and what the other
// packages read from them: the sandbox policy and its flags (sandbox.go),
// bash.patterns (settings_patterns.go), compaction (compaction.go) and the
// model keys (models.go). The flags win over the files (SandboxFlags); the
// project's file wins over the user's where it tightens, and where it
// loosens only when its folder is trusted for it.
package config
