package install_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
)

// TestRewriteCorpus runs the configurations of testdata/rewrite-corpus
// (tflock annotations in many positions, CRLF and LF, tabs, comments, a
// block on one line, a .tofu file, a JSON file, a local module) through a
// first lock, an -upgrade after widening constraints, a run after a hand
// edit of a ref, and a second run. After each run every configuration
// file parses, only source string literals changed (every other byte,
// whitespace and line endings included, is kept), JSON files are never
// changed, and Check agrees with the lock; the second run changes
// nothing (issue 23).
func TestRewriteCorpus(t *testing.T) {
	w := startWorld(t)
	c := openCache(t)
	corpus := filepath.Join("testdata", "rewrite-corpus")
	entries, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	// Annotations that no module block holds: each is a warning.
	ignored := map[string]int{"crlf-tabs": 0, "layouts": 2, "stack": 3}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, filepath.Join(corpus, e.Name()), dir)
			opts := install.Options{Dir: dir, Source: w.Source, Cache: c}
			run := func(step string, opts install.Options) *install.Result {
				t.Helper()
				before := configFiles(t, dir)
				res := initAndWrite(t, opts)
				onlySourcesChanged(t, step, before, configFiles(t, dir))
				if _, err := install.Check(context.Background(), install.CheckOptions{Dir: dir}); err != nil {
					t.Errorf("%s: Check: %v", step, err)
				}
				return res
			}

			res := run("first lock", opts)
			if len(res.Rewritten) == 0 {
				t.Error("first lock: nothing rewritten")
			}
			if n := strings.Count(strings.Join(res.Warnings, "\n"), "Ignored tflock annotation"); n != ignored[e.Name()] {
				t.Errorf("first lock: %d ignored annotations reported, want %d:\n%s", n, ignored[e.Name()], strings.Join(res.Warnings, "\n"))
			}

			// Wider constraints, then -upgrade: the refs they allow move.
			edit(t, dir, "< 2.0.0", "< 3.0.0")
			res = run("-upgrade", install.Options{Dir: dir, Source: w.Source, Cache: c, Resolve: resolve.Options{Upgrade: true}})
			if !slices.ContainsFunc(res.Rewritten, func(rw install.SourceRewrite) bool { return strings.HasSuffix(rw.New, "ref=v2.0.0") }) {
				t.Errorf("-upgrade: no ref moved to v2.0.0: %+v", res.Rewritten)
			}

			// A hand edit of the refs: the lock decides.
			edit(t, dir, "ref=v1.1.0", "ref=v1.0.0")
			run("after a hand edit", opts)

			before := configFiles(t, dir)
			res = run("second run", opts)
			if len(res.Rewritten) != 0 || len(res.Changes) != 0 {
				t.Errorf("second run: rewritten %+v, changes %v", res.Rewritten, res.Changes)
			}
			if after := configFiles(t, dir); !mapsEqual(before, after) {
				t.Error("second run changed a file")
			}
		})
	}
}

// configFiles reads the configuration files under dir (not the install
// directory) by relative path.
func configFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".tf") || strings.HasSuffix(p, ".tofu") || strings.HasSuffix(p, ".json")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mapsEqual(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// onlySourcesChanged checks that every native file of after parses and
// differs from before only in the string literals of source arguments,
// and that JSON files did not change.
func onlySourcesChanged(t *testing.T, step string, before, after map[string][]byte) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: files %d, were %d", step, len(after), len(before))
	}
	for name, was := range before {
		now := after[name]
		if strings.HasSuffix(name, ".json") {
			if !bytes.Equal(was, now) {
				t.Errorf("%s: the JSON file %s changed", step, name)
			}
			continue
		}
		if _, diags := hclsyntax.ParseConfig(now, name, hcl.InitialPos); diags.HasErrors() {
			t.Errorf("%s: %s does not parse: %v", step, name, diags)
			continue
		}
		a, _ := hclsyntax.LexConfig(was, name, hcl.InitialPos)
		b, _ := hclsyntax.LexConfig(now, name, hcl.InitialPos)
		if len(a) != len(b) {
			t.Errorf("%s: %s has %d tokens, had %d", step, name, len(b), len(a))
			continue
		}
		prevA, prevB := 0, 0
		for i := range a {
			// The bytes between tokens (spaces, tabs) and the tokens
			// themselves, except a source's literal.
			if !bytes.Equal(was[prevA:a[i].Range.Start.Byte], now[prevB:b[i].Range.Start.Byte]) {
				t.Errorf("%s: %s:%d: the spacing changed", step, name, b[i].Range.Start.Line)
			}
			prevA, prevB = a[i].Range.End.Byte, b[i].Range.End.Byte
			if a[i].Type != b[i].Type {
				t.Errorf("%s: %s:%d: token %s became %s", step, name, b[i].Range.Start.Line, a[i].Type, b[i].Type)
				break
			}
			if bytes.Equal(a[i].Bytes, b[i].Bytes) {
				continue
			}
			if a[i].Type != hclsyntax.TokenQuotedLit || i < 3 || a[i-1].Type != hclsyntax.TokenOQuote || a[i-2].Type != hclsyntax.TokenEqual || string(a[i-3].Bytes) != "source" {
				t.Errorf("%s: %s:%d: %q became %q, which is not a source literal", step, name, b[i].Range.Start.Line, a[i].Bytes, b[i].Bytes)
			}
		}
		if !bytes.Equal(was[prevA:], now[prevB:]) {
			t.Errorf("%s: %s: the end of the file changed", step, name)
		}
	}
}

// edit replaces old by new in every configuration file under dir, as a
// user would.
func edit(t *testing.T, dir, old, new string) {
	t.Helper()
	for name, b := range configFiles(t, dir) {
		if strings.HasSuffix(name, ".json") {
			continue
		}
		if nb := bytes.ReplaceAll(b, []byte(old), []byte(new)); !bytes.Equal(nb, b) {
			if err := os.WriteFile(filepath.Join(dir, name), nb, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// copyTree copies the regular files under src to dst, byte for byte.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
