package sandbox

// ConfineWith is Confine on the kernel features f instead of Detect's: the
// fallbacks of a weaker kernel, tested on this one.
func ConfineWith(p *Policy, f Features) (*Confinement, error) { return p.confine(f, nil, nil) }

// ConfineHidingWith is ConfineHiding on the kernel features f.
func ConfineHidingWith(p *Policy, f Features, hidden []string, extra ...string) (*Confinement, error) {
	return p.confine(f, hidden, extra)
}
