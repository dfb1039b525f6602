package hash

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/longtest"
	"github.com/tflock/tflock/internal/testdir"
)

// TestHashVectors checks every row of HASH-VECTORS.tsv: h1 of package
// directories and zips, and zh of zips, as computed by x/mod dirhash and
// asserted by OpenTofu's tests.
func TestHashVectors(t *testing.T) {
	base := testdir.OpenTofu(t)
	f, err := os.Open(filepath.Join(base, "HASH-VECTORS.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue // header
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 4 {
			t.Fatalf("HASH-VECTORS.tsv:%d: %d columns", line, len(cols))
		}
		kind, path, wantH1, wantZH := cols[0], filepath.Join(base, filepath.FromSlash(cols[1])), cols[2], cols[3]
		rows++
		switch kind {
		case "dir":
			got, err := H1Dir(path)
			if err != nil || string(got) != wantH1 {
				t.Errorf("HASH-VECTORS.tsv:%d: H1Dir(%s) = %v, %v; want %s", line, cols[1], got, err, wantH1)
			}
			if got, err := H1FS(os.DirFS(path)); err != nil || string(got) != wantH1 {
				t.Errorf("HASH-VECTORS.tsv:%d: H1FS(%s) = %v, %v; want %s", line, cols[1], got, err, wantH1)
			}
		case "zip":
			zh, err := ZH(path)
			if err != nil || string(zh) != wantZH {
				t.Errorf("HASH-VECTORS.tsv:%d: ZH(%s) = %v, %v; want %s", line, cols[1], zh, err, wantZH)
			}
			sum, err := HashZip(path)
			if strings.HasPrefix(wantH1, "ERROR") {
				if err == nil {
					t.Errorf("HASH-VECTORS.tsv:%d: HashZip(%s) = %v; want an error (%s)", line, cols[1], sum, wantH1)
				}
				continue
			}
			if err != nil || string(sum.H1) != wantH1 || string(sum.ZH) != wantZH {
				t.Errorf("HASH-VECTORS.tsv:%d: HashZip(%s) = %v, %v; want %s %s", line, cols[1], sum, err, wantH1, wantZH)
			}
			dir := filepath.Join(t.TempDir(), "pkg")
			if got, err := (Options{}).Install(context.Background(), path, dir, []Hash{Hash(wantZH)}); err != nil || string(got.H1) != wantH1 {
				t.Errorf("HASH-VECTORS.tsv:%d: Install(%s) = %v, %v; want h1 %s", line, cols[1], got, err, wantH1)
			}
		default:
			t.Errorf("HASH-VECTORS.tsv:%d: unknown kind %q", line, kind)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows == 0 {
		t.Fatal("HASH-VECTORS.tsv has no rows")
	}
}

var wellFormedHash = regexp.MustCompile(`^(h1:[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=|zh:[0-9a-f]{64})$`)

var hashLiteral = regexp.MustCompile(`"([a-z0-9]+:[^"\s]*)"`)

// TestLockFileHashes checks that every hash in the real lock files parses,
// and that the h1 recorded by tofu's own "providers lock" output is the h1
// of the mirrored package directory it locked.
func TestLockFileHashes(t *testing.T) {
	c := testdir.Conformance(t)
	files, err := filepath.Glob(filepath.Join(c, "lockfiles", "*.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no lock files: %v", err)
	}
	n := 0
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range hashLiteral.FindAllStringSubmatch(string(src), -1) {
			if !strings.HasPrefix(m[1], "h1:") && !strings.HasPrefix(m[1], "zh:") {
				continue
			}
			n++
			// By definition: base64 of 32 bytes, or 64 lower-case hex digits.
			// (One real file holds the placeholder "h1:...".)
			wellFormed := wellFormedHash.MatchString(m[1])
			if _, err := ParseHash(m[1]); (err == nil) != wellFormed {
				t.Errorf("%s: ParseHash(%q): %v; well formed: %v", filepath.Base(name), m[1], err, wellFormed)
			}
		}
	}
	if n == 0 {
		t.Fatal("no hashes found in the lock files")
	}
	mirror := filepath.Join(c, "opentofu", "internal", "command", "testdata", "providers-lock", "basic", "fs-mirror", "registry.opentofu.org", "hashicorp", "test", "1.0.0", "os_arch")
	got, err := H1Dir(mirror)
	if err != nil {
		t.Fatal(err)
	}
	for _, lock := range []string{"providers-lock-basic.tofu-output.terraform.lock.hcl", "providers-lock-append.tofu-output.terraform.lock.hcl"} {
		src, err := os.ReadFile(filepath.Join(c, "opentofu", "derived", lock))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), `"`+string(got)+`"`) {
			t.Errorf("%s does not record %s, the h1 of the package it locked", lock, got)
		}
	}
}

// TestModuleCache checks h1 against the Go module cache: every module zip
// in $(go env GOMODCACHE)/cache/download has a .ziphash file holding the h1
// that cmd/go computed with dirhash.HashZip. Go module zips have no
// directory entries and name their files "module@version/...", so the h1 of
// the archive's files as stored is the same definition.
func TestModuleCache(t *testing.T) {
	// The module cache is outside the repository, and tests read only what
	// is inside it unless asked, as the interop suite is given its tools.
	if os.Getenv("TFLOCK_MODCACHE_VECTORS") != "1" {
		t.Skip("set TFLOCK_MODCACHE_VECTORS=1 to check H1Zip against the .ziphash files of this machine's Go module cache")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env GOMODCACHE: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	var pairs [][2]string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".ziphash") {
			z := strings.TrimSuffix(p, ".ziphash") + ".zip"
			if _, err := os.Stat(z); err == nil {
				pairs = append(pairs, [2]string{z, p})
			}
		}
		return nil
	})
	if len(pairs) == 0 {
		t.Skip("no module zips with .ziphash in the module cache")
	}
	if (testing.Short() || !longtest.Enabled()) && len(pairs) > 10 {
		t.Logf("checking 10 of %d module zips (all with %s=1)", len(pairs), longtest.Env)
		pairs = pairs[:10]
	}
	for _, pr := range pairs {
		want, err := os.ReadFile(pr[1])
		if err != nil {
			t.Fatal(err)
		}
		got, err := H1Zip(pr[0])
		if err != nil || string(got) != strings.TrimSpace(string(want)) {
			t.Errorf("H1Zip(%s) = %v, %v; .ziphash has %s", pr[0], got, err, want)
		}
	}
	t.Logf("checked %d module zips", len(pairs))
}
