//go:build !linux

package sandbox

// Detect reports what the system offers: nothing outside Linux.
func Detect() Features { return Features{} }

// Confine confines nothing outside Linux; Features.Describe says so.
func (p *Policy) Confine(extra ...string) (*Confinement, error) { return nil, nil }

// NamespacesFailed has nothing to record outside Linux.
func NamespacesFailed(err error) {}

// NeedsOwnTemp is false where nothing is confined.
func (p *Policy) NeedsOwnTemp() bool { return false }

// ConfineHiding confines nothing outside Linux.
func (p *Policy) ConfineHiding(hidden []string, extra ...string) (*Confinement, error) {
	return nil, nil
}
