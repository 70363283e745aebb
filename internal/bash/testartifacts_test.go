package bash

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// testArtifacts is a minimal ArtifactAllocator for this package's tests.
// (session.ArtifactManager is the real one, but session imports bash, so
// bash's tests cannot import session without an import cycle.) Like it, ids
// count up from 0, a reservation is an empty <id>.<kind>.log file, and a
// released id is never handed out again.
type testArtifacts struct {
	dir  string
	mu   sync.Mutex
	next int
}

func newTestArtifacts(dir string) *testArtifacts { return &testArtifacts{dir: dir} }

func (a *testArtifacts) Allocate(kind string) (string, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return "", "", err
	}
	id := strconv.Itoa(a.next)
	p := filepath.Join(a.dir, id+"."+kind+".log")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return "", "", err
	}
	a.next++
	return id, p, nil
}

func (a *testArtifacts) Release(id string) {
	matches, _ := filepath.Glob(filepath.Join(a.dir, id+".*.log"))
	for _, p := range matches {
		if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
			_ = os.Remove(p)
		}
	}
}

// Resolve maps "artifact://N" to its file.
func (a *testArtifacts) Resolve(url string) (string, error) {
	id := strings.TrimPrefix(url, "artifact://")
	matches, err := filepath.Glob(filepath.Join(a.dir, id+".*.log"))
	if err != nil || len(matches) == 0 {
		return "", os.ErrNotExist
	}
	return matches[0], nil
}

// List returns the sorted ids that have a file.
func (a *testArtifacts) List() ([]int, error) {
	matches, err := filepath.Glob(filepath.Join(a.dir, "*.log"))
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, p := range matches {
		if n, err := strconv.Atoi(strings.SplitN(filepath.Base(p), ".", 2)[0]); err == nil {
			ids = append(ids, n)
		}
	}
	sort.Ints(ids)
	return ids, nil
}
