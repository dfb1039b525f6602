package source

import "time"

// SetClock replaces the clock of MemoizeFor's lifetimes for a test and
// returns the function that restores it.
func SetClock(f func() time.Time) (restore func()) {
	saved := now
	now = f
	return func() { now = saved }
}
