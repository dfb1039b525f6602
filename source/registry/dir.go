package registry

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// checkEmptyDir fails unless dir is absent or an empty directory.
func checkEmptyDir(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("destination %s is not empty", dir)
}

// stageDir makes a scratch directory next to dir (so that a rename can
// move the result into place) and returns it with a function removing it.
func stageDir(dir string) (string, func(), error) {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, err
	}
	stage, err := os.MkdirTemp(parent, ".tflock-stage-*")
	if err != nil {
		return "", nil, err
	}
	return stage, func() { os.RemoveAll(stage) }, nil
}

// stageDownload makes a staging directory beside dir (see stageDir) with an
// open temporary file in it, named by pattern, for a download. done closes
// the file and removes the staging directory with whatever is left in it:
// everything on failure, only the download once the content has been moved
// into place by commitDir.
func stageDownload(dir, pattern string) (stage string, tmp *os.File, done func(), err error) {
	stage, cleanup, err := stageDir(dir)
	if err != nil {
		return "", nil, nil, err
	}
	tmp, err = os.CreateTemp(stage, pattern)
	if err != nil {
		cleanup()
		return "", nil, nil, err
	}
	return stage, tmp, func() {
		tmp.Close()
		cleanup()
	}, nil
}

// commitDir moves the finished content directory to dir, which must be
// absent or empty.
func commitDir(content, dir string) error {
	if err := checkEmptyDir(dir); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Rename(content, dir)
}
