package hash

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// resetPeakRSS sets the process's peak resident size (VmHWM) back to its
// current resident size, after returning the free heap to the system. It
// reports false if the kernel does not allow it.
func resetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets the peak (Linux 4.0).
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is the process's peak resident size in bytes since the last
// resetPeakRSS, mapped file pages included (what /usr/bin/time reports as
// the maximum resident set size, and what a CI runner's memory limit
// counts).
func peakRSS(t testing.TB) float64 { return float64(statusKiB(t, "VmHWM")) * 1024 }

// statusKiB reads a field of /proc/self/status given in kB.
func statusKiB(t testing.TB, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("/proc/self/status %s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("/proc/self/status has no %s", field)
	return 0
}
