// Package fsview is the filesystem view of a sandbox: which
// paths a confined program sees read-write, read-only or masked, built in
// a mount namespace of its own as bubblewrap builds one. internal/sandbox
// plans it (Plan) from a policy; the guardian (internal/guard) applies it
// (Apply) on the one thread that forks the program. See
// docs/decisions/0011-sandbox-mount-view.md.
//
// Only syscall here: the guardian applies it before most of agentsh
// initializes (guard's init order).
package fsview

// Kind is what an Op does to its path.
type Kind byte

// The kinds, in the order Plan sorts ops of equal depth.
const (
	// Bind binds the path back read-write as it was before the whole tree
	// was made read-only: a writable root, a runtime folder inside a
	// mask, or a pin (an ancestor of a protected path made a mount point,
	// so it cannot be renamed away with what it holds).
	Bind Kind = 'w'
	// ReadOnly binds the path back read-only: a protected path inside a
	// writable root, or an AllowRead path inside a mask.
	ReadOnly Kind = 'r'
	// MaskDir covers a folder with an empty read-only tmpfs.
	MaskDir Kind = 'd'
	// MaskFile covers a file (or a socket) with an empty read-only file.
	MaskFile Kind = 'f'
)

// Op is one step of a view. A path missing when the view is built is
// left alone (unless a mask above it hides it: the mount point is then
// made inside the mask).
type Op struct {
	Kind Kind
	Path string // absolute, clean, free of symbolic links but maybe the last
}

// View is the ops in the order they apply: shallower paths first, so a
// mask inside a writable root covers what the root's bind brought back.
type View []Op

// Args is v as guardian arguments ("-v", "<kind><path>" for each op): a
// path may hold any byte but NUL, as an argument may.
func (v View) Args() []string {
	out := make([]string, 0, 2*len(v))
	for _, op := range v {
		out = append(out, "-v", string(op.Kind)+op.Path)
	}
	return out
}

// ParseOp reads one op as Args writes it.
func ParseOp(s string) (Op, bool) {
	if len(s) < 2 || s[1] != '/' {
		return Op{}, false
	}
	switch k := Kind(s[0]); k {
	case Bind, ReadOnly, MaskDir, MaskFile:
		return Op{k, s[1:]}, true
	}
	return Op{}, false
}
