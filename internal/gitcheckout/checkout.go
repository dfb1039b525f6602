// Package gitcheckout reads which commit a git working tree is at from its
// .git files, running no git command. It is the one reader of checkouts
// that the git source (git.CheckoutCommit) and the installer's adoption of
// the modules tofu installed share; it links no network code.
package gitcheckout

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoCheckout is wrapped by the error [Commit] returns for a
// directory that is not a git checkout it can read.
var ErrNoCheckout = errors.New("not a git checkout")

// Commit returns the commit checked out in dir, a working tree
// made by git (such as the checkout tofu leaves under .terraform/modules),
// by reading its .git files: HEAD, then the loose ref or packed-refs line
// it names. It runs no git command, so nothing in that repository's
// configuration (hooks, core.fsmonitor) can run.
func Commit(dir string) (string, error) {
	gitDir := filepath.Join(dir, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, ErrNoCheckout)
	}
	if fi.Mode().IsRegular() {
		// A linked checkout or submodule: "gitdir: PATH".
		b, err := readSmall(gitDir)
		if err != nil {
			return "", fmt.Errorf("%s: %w: %v", dir, ErrNoCheckout, err)
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok || p == "" {
			return "", fmt.Errorf("%s: %w: unreadable .git file", dir, ErrNoCheckout)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		gitDir = p
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s: %w", dir, ErrNoCheckout)
	}
	head, err := readSmall(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", fmt.Errorf("%s: %w: %v", dir, ErrNoCheckout, err)
	}
	return resolveHead(gitDir, strings.TrimSpace(string(head)), dir)
}

func resolveHead(gitDir, head, dir string) (string, error) {
	if IsCommitID(head) {
		return head, nil
	}
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return "", fmt.Errorf("%s: %w: HEAD is %q", dir, ErrNoCheckout, head)
	}
	if b, err := readSmall(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		if id := strings.TrimSpace(string(b)); IsCommitID(id) {
			return id, nil
		}
	}
	packed, err := readSmall(filepath.Join(gitDir, "packed-refs"))
	if err == nil {
		sc := bufio.NewScanner(bytes.NewReader(packed))
		for sc.Scan() {
			id, name, ok := strings.Cut(sc.Text(), " ")
			if ok && name == ref && IsCommitID(id) {
				return id, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w: %s names no commit", dir, ErrNoCheckout, ref)
}

// readSmall reads a file of git's metadata, refusing anything larger than
// such a file can sensibly be.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const limit = 4 << 20
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return b, nil
}

// IsCommitID reports whether s is a full object ID (SHA-1 or SHA-256).
func IsCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
