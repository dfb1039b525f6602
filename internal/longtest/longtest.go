// Package longtest says whether the long tests run: the exhaustive and
// differential checks (every truncation and bit flip of a stream, every
// writer at every level, every decoder path on every corrupt archive) that
// take minutes under the race detector. By default a test runs a sample of
// every case; with the environment variable TFLOCK_LONG_TESTS=1 it runs
// them all. It is for tests only: no non-test code may import it.
package longtest

import "os"

// Env is the environment variable that turns the long tests on.
const Env = "TFLOCK_LONG_TESTS"

// Enabled reports whether TFLOCK_LONG_TESTS asks for the long tests (any
// value but "", "0" and "false").
func Enabled() bool {
	switch os.Getenv(Env) {
	case "", "0", "false":
		return false
	}
	return true
}

// Keep reports whether the i-th of n items of a long check runs: all of
// them when the long tests run; otherwise the first and last few (head
// each), and an evenly spread sample of about sample of the rest, so that
// every kind of item keeps a representative in the default run.
func Keep(i, n, head, sample int) bool {
	if Enabled() || i < head || i >= n-head {
		return true
	}
	mid := n - 2*head
	if mid <= sample {
		return true
	}
	// The sample's stride is not a power of two, so that items of
	// every position modulo small powers of two (bit offsets, block
	// boundaries) are among those kept.
	stride := mid/sample | 1
	return (i-head)%stride == 0
}
