// Package session owns per-working-directory state of agentsh: where data and
// configuration live on disk, the artifact folder that receives spilled tool
// output, and the merged user/project settings.
package session
