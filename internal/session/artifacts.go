package session

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ArtifactScheme is the URL scheme under which spilled output is offered to the
// model and the user.
const ArtifactScheme = "artifact://"

// maxArtifactID bounds ids so a stray huge file name cannot make the counter
// overflow when numbering resumes after it.
const maxArtifactID = math.MaxInt32

// ArtifactManager hands out numbered artifact files in one folder and resolves
// ids back to files.
//
// It is safe for concurrent use, and several managers (in one process or in
// several agentsh processes) may share a folder: an id is only handed out once
// its file was created with O_EXCL and no other file claims the same number.
type ArtifactManager struct {
	dir string

	mu       sync.Mutex
	scanned  bool
	next     int            // never decreases, so an id is never reused in-process
	reserved map[int]string // ids this manager allocated → path, for Release
}

// NewArtifactManager returns a manager for dir; nothing touches the disk until
// the first Allocate, so a folder is only created when something runs.
func NewArtifactManager(dir string) *ArtifactManager {
	return &ArtifactManager{dir: dir, reserved: make(map[int]string)}
}

// Dir returns the artifact folder.
func (m *ArtifactManager) Dir() string { return m.dir }

// Allocate reserves the next free id for an artifact of the given kind (for
// example "bash") by creating an empty file <id>.<kind>.log with mode 0600.
//
// Callers treat an error as "no artifact" and carry on without a spill file.
func (m *ArtifactManager) Allocate(kind string) (id string, path string, err error) {
	if !validKind(kind) {
		return "", "", fmt.Errorf("artifact: invalid kind %q: want letters, digits, '_' or '-'", kind)
	}
	m.mu.Lock()
	defer m.mu.Unlock()

	// Checked on every call, not only the first: a folder removed while a
	// long session runs should come back rather than disable artifacts.
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return "", "", fmt.Errorf("artifact: create folder: %w", err)
	}
	if !m.scanned {
		names, err := readNames(m.dir)
		if err != nil {
			return "", "", err
		}
		for _, name := range names {
			if id, ok := artifactNameID(name); ok {
				m.next = max(m.next, id+1)
			}
		}
		m.scanned = true
	}

	for ; m.next <= maxArtifactID; m.next++ {
		n := m.next
		p := filepath.Join(m.dir, strconv.Itoa(n)+"."+kind+".log")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("artifact: reserve id %d: %w", n, err)
		}
		// A restrictive umask must not leave the sink unable to write the
		// file it was promised.
		chmodErr := f.Chmod(0o600)
		closeErr := f.Close()
		if err := errors.Join(chmodErr, closeErr); err != nil {
			_ = os.Remove(p)
			return "", "", fmt.Errorf("artifact: reserve id %d: %w", n, err)
		}
		// O_EXCL only guards this exact name; another process may have taken
		// the same number with another kind. Whoever sees a rival backs off.
		// The later of two checks always sees the other file, so at most one
		// claimant keeps the number (both backing off just leaves a gap).
		rival, err := hasRival(m.dir, n, filepath.Base(p))
		if err != nil {
			_ = os.Remove(p)
			return "", "", err
		}
		if rival {
			_ = os.Remove(p)
			continue
		}
		m.next = n + 1
		m.reserved[n] = p
		return strconv.Itoa(n), p, nil
	}
	return "", "", fmt.Errorf("artifact: ids exhausted in %s", m.dir)
}

// hasRival reports whether a file other than own claims id n. It runs on every
// allocation, so it reads bare names and skips the sorting and type
// information that List and Path need.
func hasRival(dir string, n int, own string) (bool, error) {
	names, err := readNames(dir)
	if err != nil {
		return false, err
	}
	for _, name := range names {
		if name != own {
			if id, ok := artifactNameID(name); ok && id == n {
				return true, nil
			}
		}
	}
	return false, nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact: read folder: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("artifact: read folder: %w", err)
	}
	return names, nil
}

// Release gives back a reservation whose run did not spill. It removes the
// file only if this manager allocated it and it is still an empty regular
// file, so it can never delete real output or another process's reservation.
// The id itself is not reused in this process.
func (m *ArtifactManager) Release(id string) {
	n, _, err := parseArtifactID(id)
	if err != nil || n < 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.reserved[n]
	if !ok {
		return
	}
	delete(m.reserved, n)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		_ = os.Remove(p)
	}
}

// Path resolves an id (decimal digits only, leading zeros allowed) to its
// artifact file, refusing anything that is not a regular file directly inside
// the folder.
func (m *ArtifactManager) Path(id string) (string, error) {
	n, canonical, err := parseArtifactID(id)
	if err != nil {
		return "", err
	}
	entries, err := readArtifactDir(m.dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.id != n {
			continue
		}
		// The name comes from ReadDir, so it has no separator and the join
		// stays inside the folder; Lstat makes sure we do not follow a
		// symlink that points elsewhere.
		p := filepath.Join(m.dir, e.name)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("artifact %d: %w", n, err)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("artifact %d: %s is not a regular file; refusing to follow it", n, p)
		}
		return p, nil
	}
	return "", &ArtifactNotFoundError{ID: canonical, Available: regularIDs(entries)}
}

// List returns the sorted ids that have a regular file in the folder; a
// missing folder simply has none.
func (m *ArtifactManager) List() ([]int, error) {
	entries, err := readArtifactDir(m.dir)
	if err != nil {
		return nil, err
	}
	return regularIDs(entries), nil
}

// Resolve turns "artifact://N" (or a bare "N") into the artifact's file path.
func (m *ArtifactManager) Resolve(url string) (string, error) {
	id, err := ParseArtifactURL(url)
	if err != nil {
		return "", err
	}
	return m.Path(id)
}

// ParseArtifactURL extracts the id from "artifact://N" or a bare "N" and
// returns it in canonical decimal form ("007" → "7").
//
// Everything after the scheme must be ASCII digits: "artifact://1/../x" is
// refused rather than read as id 1, so no path can ever ride along.
func ParseArtifactURL(s string) (id string, err error) {
	s = strings.TrimSpace(s)
	if len(s) >= len(ArtifactScheme) && strings.EqualFold(s[:len(ArtifactScheme)], ArtifactScheme) {
		s = s[len(ArtifactScheme):]
	}
	_, canonical, err := parseArtifactID(s)
	if err != nil {
		return "", err
	}
	return canonical, nil
}

// parseArtifactID validates an id and returns its number and canonical text.
// A well-formed id too large to ever be allocated yields n == -1 and no error,
// so callers report it as missing (it is numeric, just not there).
func parseArtifactID(s string) (n int, canonical string, err error) {
	if s == "" {
		return 0, "", errors.New("artifact:// URL requires a numeric ID: artifact://0")
	}
	if !allDigits(s) {
		return 0, "", fmt.Errorf("artifact:// ID must be numeric, got: %s", s)
	}
	canonical = strings.TrimLeft(s, "0")
	if canonical == "" {
		return 0, "0", nil
	}
	n, err = strconv.Atoi(canonical)
	if err != nil || n > maxArtifactID {
		return -1, canonical, nil
	}
	return n, canonical, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validKind(kind string) bool {
	if kind == "" {
		return false
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

type artifactEntry struct {
	id      int
	name    string
	regular bool
}

// readArtifactDir lists names of the form <digits>.<anything>.log, sorted by
// id then name. A missing folder is not an error: it just has no artifacts yet.
func readArtifactDir(dir string) ([]artifactEntry, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("artifact: read folder: %w", err)
	}
	var out []artifactEntry
	for _, de := range des {
		name := de.Name()
		if n, ok := artifactNameID(name); ok {
			out = append(out, artifactEntry{id: n, name: name, regular: de.Type().IsRegular()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].id != out[j].id {
			return out[i].id < out[j].id
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

// artifactNameID parses <digits>.<anything>.log; ids beyond maxArtifactID
// are ignored so they cannot push the counter past its limit.
func artifactNameID(name string) (int, bool) {
	digits, rest, ok := strings.Cut(name, ".")
	if !ok || digits == "" || !allDigits(digits) || !strings.HasSuffix(rest, ".log") || len(rest) <= len(".log") {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > maxArtifactID {
		return 0, false
	}
	return n, true
}

func regularIDs(entries []artifactEntry) []int {
	ids := []int{}
	for _, e := range entries {
		if e.regular && (len(ids) == 0 || ids[len(ids)-1] != e.id) {
			ids = append(ids, e.id)
		}
	}
	return ids
}

// ArtifactNotFoundError reports a well-formed id with no file, listing what is
// there so the model can correct itself.
type ArtifactNotFoundError struct {
	ID        string // canonical decimal id that was asked for
	Available []int  // sorted ids that do have a file
}

// Error keeps the reference wording, which models have learned to act on.
func (e *ArtifactNotFoundError) Error() string {
	avail := "none"
	if len(e.Available) > 0 {
		parts := make([]string, len(e.Available))
		for i, id := range e.Available {
			parts[i] = strconv.Itoa(id)
		}
		avail = strings.Join(parts, ", ")
	}
	return "Artifact " + e.ID + " not found. Available: " + avail
}
