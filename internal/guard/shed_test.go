package guard

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// binaryRSS is how much of this binary's code and read-only data is
// mapped into this process (Rss of its r-xp and r--p mappings, kB).
func binaryRSS(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps: ", err)
	}
	defer f.Close()
	total, ours := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 6 && strings.Contains(fields[0], "-"):
			ours = strings.Join(fields[5:], " ") == exe && (fields[1] == "r-xp" || fields[1] == "r--p")
		case ours && len(fields) >= 2 && fields[0] == "Rss:":
			n, _ := strconv.Atoi(fields[1])
			total += n
		}
	}
	return total
}

// TestShedStartPages: what a guardian calls once it has run a while gives
// back the binary's pages its start mapped (a guardian's RSS was 12 MB of
// them), and the process goes on running. The pages this process touches
// again right away come back at once, whole large folios of a binary the
// linker just wrote: fewer, not none, is what holds everywhere.
func TestShedStartPages(t *testing.T) {
	before := binaryRSS(t)
	shedStartPages()
	after := binaryRSS(t)
	t.Logf("binary's pages mapped: %d kB before, %d kB after", before, after)
	if before == 0 || after >= before {
		t.Errorf("binary's pages mapped: %d kB before, %d kB after; want fewer after", before, after)
	}
}
