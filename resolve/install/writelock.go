package install

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/tflock/tflock/lockfile"
)

// WriteLock writes the lock file of r to path atomically
// ([lockfile.WriteFile]) and returns the note OpenTofu prints after init:
// that the file was created, or the changes followed by a request to review
// and commit them, in the words of r ([Result.Words]; when it has no
// program name, its flavour's). When nothing changed and the file exists, it writes
// nothing and returns "". When there is no file and nothing to lock (no
// provider, no module, no kept unknown block), it writes nothing either,
// as tofu does, and returns "".
func WriteLock(path string, r *Result) (string, error) {
	if r == nil || r.Lock == nil {
		return "", errors.New("install: WriteLock: no result")
	}
	_, statErr := os.Stat(path)
	existed := statErr == nil
	if existed && len(r.Changes) == 0 {
		return "", nil
	}
	if !existed && isEmpty(r.Lock) {
		return "", nil
	}
	if err := lockfile.WriteFile(path, r.Lock); err != nil {
		return "", err
	}
	w := r.Words
	if w.Program == "" {
		w = WordsFor(r.Flavor)
	}
	tool, command := w.Program, w.Init
	if !existed {
		return createdNote(filepath.Base(path), r.Lock, tool, command), nil
	}
	return lockfile.SummaryBy(tool, r.Changes), nil
}

// createdNote is the note for a lock file that did not exist. For a file
// that locks providers alone it is OpenTofu 1.12.6's text
// (internal/command/views/init.go, InitHuman.LockFileCreated) with its line
// breaks, or, for Terraform's flavour, the same text as terraform 1.11
// prints it (tool "Terraform", command "terraform init"); a file that locks
// modules says so.
func createdNote(name string, lf *lockfile.File, tool, command string) string {
	what := "provider"
	if modulesAdopted(lf) {
		what = "module"
		for range lf.Providers() {
			what = "provider and module"
			break
		}
	}
	return tool + " has created a lock file " + name + " to record the " + what + "\n" +
		"selections it made above. Include this file in your version control repository\n" +
		"so that " + tool + " can guarantee to make the same selections by default when\n" +
		"you run \"" + command + "\" in the future.\n"
}

// isEmpty reports whether a lock file locks nothing and keeps nothing.
func isEmpty(lf *lockfile.File) bool {
	for range lf.Providers() {
		return false
	}
	return !modulesAdopted(lf) && len(lf.Unknown()) == 0
}
