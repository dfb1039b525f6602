package git

import "github.com/tflock/tflock/internal/gitcheckout"

// ErrNoCheckout is wrapped by the error [CheckoutCommit] returns for a
// directory that is not a git checkout it can read.
var ErrNoCheckout = gitcheckout.ErrNoCheckout

// CheckoutCommit returns the commit checked out in dir, a working tree
// made by git (such as the checkout tofu leaves under .terraform/modules),
// by reading its .git files: HEAD, then the loose ref or packed-refs line
// it names. It runs no git command, so nothing in that repository's
// configuration (hooks, core.fsmonitor) can run.
func CheckoutCommit(dir string) (string, error) { return gitcheckout.Commit(dir) }
