package pager

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"sort"
)

const (
	// idxBlock is the most lines that share one checkpoint of the index.
	idxBlock = 64
	// blockSpan: every line start of a block lies within blockSpan bytes of
	// the block's start, so finding a line never reads more than that.
	blockSpan = 64 << 10
	// scanChunk is the read size of indexing and search.
	scanChunk = 1 << 20
)

// lineIndex maps line numbers to byte offsets. It keeps a checkpoint, the
// start of a block of lines, every idxBlock lines or sooner, so that all
// the line starts of a block lie within blockSpan bytes of its start: the
// starts inside a block are found by reading at most blockSpan bytes.
type lineIndex struct {
	r          io.ReaderAt
	size       int64 // bytes indexed
	n          int   // lines
	trailingNL bool  // the last byte is '\n'
	blocks     []int64
	first      []int // the number of each block's first line
	cache      [8]blockCache
	next       int
	buf        []byte
}

type blockCache struct {
	k      int // block number + 1; 0 is empty
	n      int
	starts [idxBlock]int64
}

// buildIndex reads size bytes of r once and indexes their lines.
func buildIndex(r io.ReaderAt, size int64) (*lineIndex, error) {
	x := &lineIndex{r: r}
	if size <= 0 {
		return x, nil
	}
	buf := make([]byte, min(int64(scanChunk), size))
	b := indexBuilder{x: x, size: size}
	x.blocks, x.first = append(x.blocks, 0), append(x.first, 0)
	var off int64
	var last byte
	for off < size {
		want := int(min(int64(len(buf)), size-off))
		m, err := r.ReadAt(buf[:want], off)
		if m < want {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			size = off + int64(m) // the file shrank
			b.size = size
		}
		if m == 0 {
			break
		}
		b.scan(buf[:m], off)
		last = buf[m-1]
		off += int64(m)
	}
	x.size = off
	if off == 0 {
		x.blocks, x.first = nil, nil
		return x, nil
	}
	x.trailingNL = last == '\n'
	x.n = b.nl + b.seen + 1
	if x.trailingNL {
		x.n--
	}
	return x, nil
}

// indexBuilder finds the checkpoints of a lineIndex.
type indexBuilder struct {
	x     *lineIndex
	size  int64
	start int64 // the current block's start
	seen  int   // newlines in it so far
	nl    int   // newlines before it
}

// newlines8 has the high bit set in each byte of b[:8] that is '\n'.
func newlines8(b []byte) uint64 {
	const lo7, nl8 = 0x7f7f7f7f7f7f7f7f, 0x0a0a0a0a0a0a0a0a
	t := binary.LittleEndian.Uint64(b) ^ nl8
	return ^((t&lo7 + lo7) | t | lo7)
}

// scan indexes chunk, the bytes at off.
func (b *indexBuilder) scan(chunk []byte, off int64) {
	i := 0
outer:
	for i < len(chunk) {
		// Newlines before lim start lines within blockSpan of the block.
		lim := int(min(max(b.start+blockSpan-off, 0), int64(len(chunk))))
		if i >= lim {
			j := bytes.IndexByte(chunk[i:], '\n')
			if j < 0 {
				return
			}
			i += j
			b.split(off + int64(i))
			i++
			continue
		}
		// Eight bytes at a time: newlines8 has the high bit of each '\n'
		// byte; the idxBlock-th newline of the block ends it.
		for ; i+32 <= lim; i += 32 {
			c := bits.OnesCount64(newlines8(chunk[i:])) + bits.OnesCount64(newlines8(chunk[i+8:])) +
				bits.OnesCount64(newlines8(chunk[i+16:])) + bits.OnesCount64(newlines8(chunk[i+24:]))
			if b.seen+c >= idxBlock {
				break // the end of the block is in these 32 bytes
			}
			b.seen += c
		}
		for ; i+8 <= lim; i += 8 {
			y := newlines8(chunk[i:])
			c := bits.OnesCount64(y)
			if b.seen+c < idxBlock {
				b.seen += c
				continue
			}
			for ; b.seen+1 < idxBlock; b.seen++ {
				y &= y - 1
			}
			i += bits.TrailingZeros64(y) >> 3
			b.split(off + int64(i))
			i++
			continue outer
		}
		for ; i < lim; i++ {
			if chunk[i] != '\n' {
				continue
			}
			if b.seen+1 == idxBlock {
				b.split(off + int64(i))
				i++
				continue outer
			}
			b.seen++
		}
	}
}

// split ends the current block with the newline at q.
func (b *indexBuilder) split(q int64) {
	b.nl += b.seen + 1
	b.seen = 0
	if q+1 < b.size {
		b.start = q + 1
		b.x.blocks = append(b.x.blocks, q+1)
		b.x.first = append(b.x.first, b.nl)
	}
}

// blockOf is the block holding line i.
func (x *lineIndex) blockOf(i int) int {
	return sort.Search(len(x.first), func(k int) bool { return x.first[k] > i }) - 1
}

// block returns the line starts of block k.
func (x *lineIndex) block(k int) []int64 {
	for i := range x.cache {
		if c := &x.cache[i]; c.k == k+1 {
			return c.starts[:c.n]
		}
	}
	lo, hi, last := x.blocks[k], x.size, x.n
	if k+1 < len(x.blocks) {
		hi, last = x.blocks[k+1], x.first[k+1]
	}
	if x.buf == nil {
		x.buf = make([]byte, blockSpan)
	}
	m, _ := x.r.ReadAt(x.buf[:min(hi-lo, blockSpan)], lo)
	data := x.buf[:m]
	c := &x.cache[x.next]
	x.next = (x.next + 1) % len(x.cache)
	c.k, c.n = k+1, last-x.first[k]
	c.starts[0] = lo
	i, got := 0, 1
	for got < c.n {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		c.starts[got] = lo + int64(i)
		got++
	}
	for ; got < c.n; got++ { // the file changed under us
		c.starts[got] = hi
	}
	return c.starts[:c.n]
}

// start is the offset of line i; start(n) is the size.
func (x *lineIndex) start(i int) int64 {
	if i >= x.n {
		return x.size
	}
	k := x.blockOf(i)
	return x.block(k)[i-x.first[k]]
}

// end is the offset just past line i's text, before its newline.
func (x *lineIndex) end(i int) int64 {
	if i+1 < x.n {
		return x.start(i+1) - 1
	}
	if x.trailingNL {
		return x.size - 1
	}
	return x.size
}

// lineOf is the line holding byte off.
func (x *lineIndex) lineOf(off int64) int {
	k := sort.Search(len(x.blocks), func(k int) bool { return x.blocks[k] > off }) - 1
	if k < 0 {
		return 0
	}
	st := x.block(k)
	j := sort.Search(len(st), func(j int) bool { return st[j] > off }) - 1
	return x.first[k] + max(j, 0)
}

// memory is roughly the bytes the index holds.
func (x *lineIndex) memory() int {
	return 8*cap(x.blocks) + 8*cap(x.first) + len(x.buf) + 8*idxBlock*len(x.cache)
}
