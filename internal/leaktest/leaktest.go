// Package leaktest finds secrets where they must not be: in text (messages,
// events, program output) and in the names and contents of files. Tests of
// tflock use it to check that no credential leaves a call.
package leaktest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Secret returns prefix followed by 24 random hex digits: a distinctive
// string that nothing but the test itself can produce, so that finding it
// anywhere is a leak.
func Secret(tb testing.TB, prefix string) string {
	tb.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// SSHKey returns a stand-in private key as a git "sshkey" argument takes
// it (base64), and the distinctive secret it encodes: a leak of either
// form is a leak of the key.
func SSHKey(tb testing.TB) (arg, secret string) {
	tb.Helper()
	secret = Secret(tb, "sshKEY")
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secret + "\n-----END OPENSSH PRIVATE KEY-----\n"
	return base64.StdEncoding.EncodeToString([]byte(key)), secret
}

// Checker looks for a set of secrets.
type Checker struct {
	tb      testing.TB
	secrets []string
}

// New returns a Checker that looks for each secret in every spelling a
// URL may give it: as it is, percent-encoded (path and query forms), and
// without trailing base64 padding.
func New(tb testing.TB, secrets ...string) *Checker {
	c := &Checker{tb: tb}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, f := range []string{s, url.QueryEscape(s), url.PathEscape(s), strings.TrimRight(s, "=")} {
			if f != "" && !slices.Contains(c.secrets, f) {
				c.secrets = append(c.secrets, f)
			}
		}
	}
	return c
}

// With returns a Checker for the same secrets reporting to tb (a subtest).
func (c *Checker) With(tb testing.TB) *Checker { return &Checker{tb: tb, secrets: c.secrets} }

// Text reports an error if s holds a secret; where says what s is.
func (c *Checker) Text(where, s string) {
	c.tb.Helper()
	for _, sec := range c.secrets {
		if strings.Contains(s, sec) {
			c.tb.Errorf("%s holds the secret %q:\n%s", where, sec, s)
			return
		}
	}
}

// Tree reports an error for every file, directory or link under root
// whose name, content or link target holds a secret. The files named in
// keep (slash-separated paths relative to root) may hold secrets in their
// content.
func (c *Checker) Tree(root string, keep ...string) {
	c.tb.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		c.Text("the file name "+p, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			c.Text("the target of the link "+p, target)
		case d.Type().IsRegular() && !slices.Contains(keep, rel):
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			c.Text("the file "+p, string(b))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		c.tb.Fatal(err)
	}
}
