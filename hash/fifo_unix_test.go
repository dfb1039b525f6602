//go:build unix

package hash

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDirFIFO checks that a named pipe is an error, not a hang
// (dirhash.HashDir would block reading it).
func TestDirFIFO(t *testing.T) {
	pkg := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(pkg, "pipe"), 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := H1Dir(pkg); !errors.Is(err, ErrUnsupported) {
		t.Errorf("H1Dir: error %v; want ErrUnsupported", err)
	}
}
