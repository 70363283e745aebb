package sandbox

// Unavailable is why this system cannot confine a shell at all; "" on
// Linux, where the enforcement tries what the kernel offers.
func Unavailable() string { return "" }
