package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoArtifacts is returned by NewestArtifacts when no folder of the
// working directory holds an artifact.
var ErrNoArtifacts = errors.New("no artifacts")

// ArtifactSource is one artifact folder of a working directory: a session's
// or `agentsh exec`'s.
type ArtifactSource struct {
	Dir       string
	SessionID string    // "" for agentsh exec's folder
	Written   time.Time // the last write of its newest artifact
}

// NewestArtifacts returns the artifact folder of cwd that was written last,
// so that `agentsh artifact N` reads the artifact://N the user just saw,
// whether a session (running or ended) or `agentsh exec` printed it.
func NewestArtifacts(cwd string) (ArtifactSource, error) {
	root := SessionsDir(cwd)
	des, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ArtifactSource{}, fmt.Errorf("artifact: %w", err)
	}
	var best ArtifactSource
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		src := ArtifactSource{Dir: filepath.Join(root, de.Name())}
		if de.Name() != filepath.Base(ExecArtifactsDir(cwd)) {
			i := strings.LastIndexByte(de.Name(), '_')
			if i < 0 {
				continue
			}
			src.SessionID = de.Name()[i+1:]
		}
		if src.Written = newestArtifactWrite(src.Dir); src.Written.After(best.Written) {
			best = src
		}
	}
	if best.Dir == "" {
		return best, ErrNoArtifacts
	}
	return best, nil
}

// newestArtifactWrite is the latest modification time of the artifact
// files in dir; zero when it has none.
func newestArtifactWrite(dir string) time.Time {
	entries, err := readArtifactDir(dir)
	if err != nil {
		return time.Time{}
	}
	var newest time.Time
	for _, e := range entries {
		if !e.regular {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, e.name)); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest
}
