//go:build unix

package interop

import (
	"os"
	"syscall"
)

// fileID is a file's device and inode numbers.
func fileID(info os.FileInfo) ([2]uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // the field types differ between platforms
}
