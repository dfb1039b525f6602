//go:build unix

package install

import (
	"io/fs"
	"syscall"
)

// hardLinks returns the number of hard links of a file, or 0 if the
// system does not say.
func hardLinks(fi fs.FileInfo) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	return uint64(st.Nlink) //nolint:unconvert // Nlink is not uint64 on every unix
}
