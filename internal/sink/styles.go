package sink

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// StylesSuffix names the file beside an artifact that holds the SGR
// sequences of its output (Options.Styled): the artifact stays the plain
// text the model and its tools read, and a pager that shows colours reads
// both. There is none when the output had no colour, or when the artifact
// was capped (its offsets past the head are not the stream's).
const StylesSuffix = ".sgr"

// maxPendingMarks bounds the marks kept in memory until the artifact
// opens; past it the artifact gets no colours.
const maxPendingMarks = 1 << 20

// MaxStylesFile bounds the styles file a reader loads.
const MaxStylesFile = 8 << 20

// A styles file is a run of records, one per stream offset at which SGR
// sequences stand: uvarint(offset - previous offset), uvarint(n), then n
// bytes, the sequences themselves.

// marks records where the SGR sequences of a styled stream stand in the
// plain one (the artifact), for the styles file.
type marks struct {
	path    string
	pending []byte // records before the artifact opens
	f       *os.File
	w       *bufio.Writer
	last    int64  // offset of the last record written
	cur     []byte // sequences at curOff, not written yet
	curOff  int64
	failed  bool // too many before the artifact, or a write error: no file
	records int
}

// scan records the sequences of styled chunk sc, whose text starts at
// offset base of the plain stream.
func (m *marks) scan(sc []byte, base int) {
	if m.failed {
		return
	}
	esc := 0 // bytes of sequences before i
	for i := 0; ; {
		k := bytes.IndexByte(sc[i:], 0x1b)
		if k < 0 {
			return
		}
		i += k
		j := bytes.IndexByte(sc[i:], 'm') + 1
		m.add(int64(base+i-esc), sc[i:i+j])
		esc += j
		i += j
	}
}

func (m *marks) add(off int64, seq []byte) {
	if len(m.cur) > 0 && off != m.curOff {
		m.emit()
	}
	m.curOff = off
	m.cur = appendSGRs(nil, append(m.cur, seq...))
}

// emit writes the pending record.
func (m *marks) emit() {
	if len(m.cur) == 0 || m.failed {
		return
	}
	var hdr [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(m.curOff-m.last))
	n += binary.PutUvarint(hdr[n:], uint64(len(m.cur)))
	if m.w == nil {
		if len(m.pending)+n+len(m.cur) > maxPendingMarks {
			m.failed, m.pending = true, nil
			return
		}
		m.pending = append(append(m.pending, hdr[:n]...), m.cur...)
	} else {
		_, _ = m.w.Write(hdr[:n])
		_, _ = m.w.Write(m.cur)
	}
	m.last, m.cur = m.curOff, m.cur[:0]
	m.records++
}

// open starts the styles file when the artifact opens.
func (m *marks) open() {
	if m.failed {
		return
	}
	f, err := os.OpenFile(m.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		m.failed = true
		return
	}
	m.f, m.w = f, bufio.NewWriterSize(f, fileBufSize)
	_, _ = m.w.Write(m.pending)
	m.pending = nil
}

// close ends the styles file; keep false (or nothing to keep) removes it.
func (m *marks) close(keep bool) {
	m.emit()
	if m.f == nil {
		return
	}
	err := m.w.Flush()
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	m.f, m.w = nil, nil
	if !keep || m.failed || m.records == 0 || err != nil {
		_ = os.Remove(m.path)
	}
}

// Mark is an SGR sequence (or several) at an offset of an artifact.
type Mark struct {
	Off int64
	Seq string
}

// Styles are the SGR sequences of an artifact, read from its styles file.
type Styles struct {
	marks []Mark
}

// ReadStyles reads the styles file of the artifact at path; nil without
// one (no colours), or when it is larger than MaxStylesFile.
func ReadStyles(artifact string) (*Styles, error) {
	f, err := os.Open(artifact + StylesSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read styles: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxStylesFile+1))
	if err != nil {
		return nil, fmt.Errorf("read styles: %w", err)
	}
	if len(b) > MaxStylesFile {
		return nil, nil
	}
	st := &Styles{}
	var off int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("read styles: corrupt file")
		}
		l, k := binary.Uvarint(b[n:])
		if k <= 0 || uint64(len(b)-n-k) < l {
			return nil, errors.New("read styles: corrupt file")
		}
		off += int64(d)
		seq := SanitizeStyled(string(b[n+k : n+k+int(l)]))
		st.marks = append(st.marks, Mark{Off: off, Seq: seq})
		b = b[n+k+int(l):]
	}
	return st, nil
}

// Range returns the style in force at offset from (the SGR sequences that
// give it) and the marks in [from, to).
func (st *Styles) Range(from, to int64) (state string, in []Mark) {
	i := sort.Search(len(st.marks), func(k int) bool { return st.marks[k].Off >= from })
	j := sort.Search(len(st.marks), func(k int) bool { return st.marks[k].Off >= to })
	// The state: the marks before from, back to a reset (a bounded walk:
	// an unreset style that old is let go).
	var pre []byte
	for k := i - 1; k >= 0 && k >= i-64; k-- {
		pre = append([]byte(st.marks[k].Seq), pre...)
		if isReset(st.marks[k].Seq) { // a mark is reduced: a reset comes first
			break
		}
	}
	return SGRState(string(pre)), st.marks[i:j]
}

// isReset reports whether seq starts with a reset.
func isReset(seq string) bool {
	return len(seq) >= 3 && (seq[:3] == "\x1b[m" || len(seq) >= 4 && seq[:4] == "\x1b[0m" || len(seq) >= 5 && seq[:5] == "\x1b[0;")
}
