package pager

// frame is what View draws, laid out by Update whenever the position, the
// size, the wrap or the search may have changed: the decoded lines on
// screen and the rows they make. View reads it and never decodes a line
// or reads the file.
type frame struct {
	lines []dline // the decoded lines, their buffers kept from frame to frame
	rows  []frameRow
	last  int // the last line with a row on screen; -1 for an empty file
}

// frameRow is one body row: cells [a, b) of lines[li], cell a at column
// col, shown from column x0.
type frameRow struct {
	li      int
	line    int  // the file's line (from 0)
	first   bool // the line's first row: the gutter shows its number
	a, b    int
	col, x0 int
}

// layout keeps the position inside the file and decodes the lines the
// window shows into p.fr; every change View shows goes through it.
func (p *Pager) layout() {
	p.clamp()
	f := &p.fr
	f.rows = f.rows[:0]
	bodyH := p.bodyHeight()
	switch {
	case bodyH == 0:
		f.last = p.lastVisible()
		return
	case p.idx.n == 0:
		f.last = -1
		return
	}
	used := 0
	slot := func() *dline {
		if used == len(f.lines) {
			f.lines = append(f.lines, dline{})
		}
		used++
		return &f.lines[used-1]
	}
	tw := p.textWidth()
	line := p.top
	if !p.wrap {
		extra := 0
		if p.search != nil {
			extra = len(p.search.pat)
		}
		from := max(p.xOff-2*extra-tabStop, 0) // matches across the edge show
		for ; len(f.rows) < bodyH && line < p.idx.n; line++ {
			d := slot()
			p.decodeLine(d, line, from, p.xOff+tw+extra)
			f.rows = append(f.rows, frameRow{li: used - 1, line: line, first: true, b: len(d.cells), col: d.startCol, x0: p.xOff})
		}
		f.last = line - 1
		return
	}
	// A wrapped line is decoded whole (up to lineCap) into p.d; the frame
	// keeps only the cells of its rows on screen, so what it holds stays
	// within the window's size.
	skip := p.topRow
	for ; len(f.rows) < bodyH && line < p.idx.n; line++ {
		p.decodeLine(&p.d, line, 0, 1<<30)
		p.wrapRows(&p.d, tw)
		last := min(len(p.rows), skip+bodyH-len(f.rows)) // rows [skip, last) show
		if skip >= last {
			skip = 0
			continue
		}
		lo, hi := p.rows[skip], len(p.d.cells)
		if last < len(p.rows) {
			hi = p.rows[last]
		}
		d := slot()
		d.keep(&p.d, lo, hi)
		for k := skip; k < last; k++ {
			end := hi
			if k+1 < last {
				end = p.rows[k+1]
			}
			f.rows = append(f.rows, frameRow{li: used - 1, line: line, first: k == 0, a: p.rows[k] - lo, b: end - lo,
				col: p.rowCols[k], x0: p.rowCols[k]})
		}
		skip = 0
	}
	f.last = line - 1
}

// keep makes d a copy of cells [a, b) of src, with their text and the
// styles they name.
func (d *dline) keep(src *dline, a, b int) {
	t0, t1 := 0, 0
	if a < b {
		t0, t1 = int(src.cells[a].off), src.cellEnd(b-1)
	}
	d.text = append(d.text[:0], src.text[t0:t1]...)
	d.cells = append(d.cells[:0], src.cells[a:b]...)
	for k := range d.cells {
		d.cells[k].off -= int32(t0)
	}
	d.styles = append(d.styles[:0], src.styles...)
	d.unusual = src.unusual
}
