//go:build !linux

package hash

import "testing"

// resetPeakRSS: the peak resident size is read on Linux only.
func resetPeakRSS() bool { return false }

// peakRSS is not read outside Linux.
func peakRSS(t testing.TB) float64 { return 0 }
