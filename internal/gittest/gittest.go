// Package gittest makes git repositories with the git binary and serves
// them over git's smart HTTP protocol, for tests. It is for tests only: no
// non-test code may import it.
package gittest

import (
	"testing"

	"github.com/tflock/tflock/internal/githttp"
)

// Env is the environment git runs in for fixtures: githttp's (the
// process's without its GIT_ variables, none of the machine's
// configuration, no prompts, fixed identities and dates).
func Env() []string { return githttp.Env() }

// Run runs git with args in dir, in [Env], with "main" as the default
// branch and file:// transport allowed, and returns its trimmed output. It
// fails the test if git fails.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return githttp.Run(t, dir, append([]string{"-c", "protocol.file.allow=always"}, args...)...)
}

// ServeHTTP serves the repositories under root over git's smart HTTP
// protocol (githttp's server, anonymously) until the test ends, and returns
// their base URL: the repository root/x.git is at BASE/x.git.
func ServeHTTP(t testing.TB, root string) string {
	t.Helper()
	return githttp.NewServer(t, root, githttp.Options{}).URL()
}
