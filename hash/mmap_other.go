//go:build !linux

package hash

import (
	"errors"
	"os"
)

// mapOutput is available on Linux only, where blocks can be allocated
// before the file is mapped (see mmap_linux.go); elsewhere entries are
// written through the file.
func mapOutput(f *os.File, size int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("mapped output not supported on this platform")
}

// populate is not needed where nothing is mapped.
func populate(b []byte) bool { return false }

// release is not needed where nothing is mapped.
func release(b []byte) bool { return false }
