package flock

import (
	"os"
	"path/filepath"
	"time"
)

// SweepTemps removes the temporary files that killed processes left in
// dir: those matching pattern (a filepath.Match pattern), regular files
// older than grace, whose advisory lock ([LockOpenFile]) no process
// holds. A writer takes that lock on its temporary file as soon as it
// creates it; grace covers the moment in between.
func SweepTemps(dir, pattern string, grace time.Duration) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return
	}
	for _, name := range names {
		info, err := os.Lstat(name)
		if err != nil || !info.Mode().IsRegular() || time.Since(info.ModTime()) < grace {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		free, err := LockOpenFile(f)
		_ = f.Close()
		if err == nil && free {
			_ = os.Remove(name)
		}
	}
}
