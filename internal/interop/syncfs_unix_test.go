//go:build unix

package interop

import "syscall"

// syncFS writes every file system's dirty data back (sync(2)), so that a
// timed run does not pay for the write-back of an earlier one.
func syncFS() { syscall.Sync() }
