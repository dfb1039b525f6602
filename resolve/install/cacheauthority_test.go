package install_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

// authorityConfig requires cloud and vpc at exactly version v.
func authorityConfig(v string) string {
	return `terraform {
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud", version = "` + v + `" }
  }
}
module "vpc" {
  source  = "registry.example.test/acme/vpc/cloud"
  version = "` + v + `"
}
`
}

// forgeRecord writes, into the cache directory cacheDir, the index record
// of the package identity whose record holds from in its "package" field
// with from replaced by to: the forged record says that identity was
// filled with the other one's entry. When wantHashes is set, the record
// lists them as the package's hashes (its h1 field still names the other
// entry); otherwise it lists that entry's h1: alone, so that no zh: in it
// can disagree with what the origin signs. Nothing else in the cache is
// touched.
func forgeRecord(t *testing.T, cacheDir, match, from, to string, wantHashes []hash.Hash) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cacheDir, "index", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		pkg, _ := rec["package"].(string)
		if !strings.Contains(pkg, match) || !strings.Contains(pkg, from) {
			continue
		}
		pkg = strings.Replace(pkg, from, to, 1)
		rec["package"] = pkg
		rec["hashes"] = wantHashes
		if wantHashes == nil {
			rec["hashes"] = []any{rec["h1"]}
		}
		out, _ := json.Marshal(rec)
		sum := sha256.Sum256([]byte(pkg))
		if err := os.WriteFile(filepath.Join(cacheDir, "index", hex.EncodeToString(sum[:])+".json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no index record of %s %s in %v", match, from, files)
}

// TestIndexRecordIsNoAuthority is the regression test for issue 22 item 4:
// a cache that holds cloud and vpc 1.0.0 only, and one index record edited
// to say that 1.1.0 was filled with 1.0.0's intact entry, must not make a
// fresh install of 1.1.0 install 1.0.0's files: not with a lock file naming
// 1.1.0's hashes (the record listing them too), not without a lock file,
// with Reverify or without. The hashes written to the lock file are those
// of the packages installed, which are 1.1.0's.
func TestIndexRecordIsNoAuthority(t *testing.T) {
	w := startWorldWith(t, installtest.Options{NoGit: true})
	// The lock file of 1.1.0, made elsewhere (another cache).
	locked := t.TempDir()
	writeFiles(t, locked, map[string]string{"main.tf": authorityConfig("1.1.0")})
	genuine := initAndWrite(t, install.Options{Dir: locked, Source: w.Source, Cache: openCache(t)})
	lockBytes, err := os.ReadFile(filepath.Join(locked, install.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	exe110, err := os.ReadFile(filepath.Join(genuine.Providers[0].Dir, "terraform-provider-cloud_v1.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	readme := func(dir string) string {
		b, _ := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "vpc", "README.md"))
		return string(b)
	}

	for _, tc := range []struct {
		name     string
		withLock bool
		reverify bool
	}{
		{"lock", true, false},
		{"lock reverify", true, true},
		{"no lock", false, false},
		{"no lock reverify", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cacheDir := t.TempDir()
			old := t.TempDir()
			writeFiles(t, old, map[string]string{"main.tf": authorityConfig("1.0.0")})
			initAndWrite(t, install.Options{Dir: old, Source: w.Source, Cache: openCacheIn(cacheDir)})
			var provHashes, modHashes []hash.Hash
			if tc.withLock {
				provHashes = genuine.Lock.ProviderHashes(genuine.Providers[0].Package.Addr)
				modHashes = genuine.Lock.Module("vpc").Hashes
			}
			forgeRecord(t, cacheDir, "acme/cloud", "1.0.0", "1.1.0", provHashes)
			forgeRecord(t, cacheDir, "acme/vpc", "1.0.0", "1.1.0", modHashes)

			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.tf": authorityConfig("1.1.0")})
			if tc.withLock {
				writeFiles(t, dir, map[string]string{install.LockFileName: string(lockBytes)})
			}
			res := initAndWrite(t, install.Options{Dir: dir, Source: w.Source, Cache: openCacheIn(cacheDir), Reverify: tc.reverify})
			exe, err := os.ReadFile(filepath.Join(res.Providers[0].Dir, "terraform-provider-cloud_v1.1.0"))
			if err != nil || string(exe) != string(exe110) {
				t.Errorf("the provider installed as 1.1.0 is not 1.1.0's executable (the forged record's entry was used)")
			}
			if got := readme(dir); got != "vpc 1.1.0\n" {
				t.Errorf("the module installed as 1.1.0 has README %q, want 1.1.0's", got)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, install.LockFileName)); string(b) != string(lockBytes) {
				t.Errorf("the lock file differs from the one 1.1.0's packages give:\n%s\nwant:\n%s", b, lockBytes)
			}
		})
	}
}
