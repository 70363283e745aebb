// Package testkit holds the helpers the tests share: Eventually, the one
// way to wait for a condition (a generous hang guard that says what it
// waited for and the last state it saw), and Golden, the one golden-file
// check (with -update to rewrite). It is imported only from _test.go files.
package testkit

import (
	"os"
	"strconv"
	"time"
)

// DefaultBound is the hang guard of a wait that names none: far above what
// any wait takes on a loaded machine, since it only turns a hang into a
// failure that says what was awaited.
const DefaultBound = 30 * time.Second

// ScaleEnv names the environment variable that multiplies every bound (a
// number such as 2 or 0.5), for a machine slower than any the bounds were
// made for.
const ScaleEnv = "AGENTSH_TEST_TIMEOUT_SCALE"

// Scale returns d multiplied by $AGENTSH_TEST_TIMEOUT_SCALE (1 when unset
// or not a positive number).
func Scale(d time.Duration) time.Duration {
	f, err := strconv.ParseFloat(os.Getenv(ScaleEnv), 64)
	if err != nil || f <= 0 {
		return d
	}
	return time.Duration(float64(d) * f)
}
