// Package xdg is where agentsh keeps its files (DataDir, ConfigDir under
// the XDG base directories, Home) and how it reads the ones a model could
// have replaced: OpenRegular and ReadRegular refuse a FIFO or a device
// before anything waits on it. It imports nothing of agentsh.
package xdg
