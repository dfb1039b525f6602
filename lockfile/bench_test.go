package lockfile

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// benchFile is the lock file of a providers lock of 50 providers, each
// with constraints and 8 hashes (4 platforms' h1: hashes and 4 zh:).
func benchFile(b *testing.B) *File {
	b.Helper()
	f := New()
	v, err := versions.Parse("5.31.0")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		lock := &ProviderLock{
			Addr:        tfaddr.MustParseProviderSource(fmt.Sprintf("registry.opentofu.org/hashicorp/p%02d", i)),
			Version:     v,
			Constraints: "~> 5.0",
		}
		for j := range 4 {
			sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d", i, j))
			lock.Hashes = append(lock.Hashes,
				hash.Hash("h1:"+base64.StdEncoding.EncodeToString(sum[:])),
				hash.Hash(fmt.Sprintf("zh:%x", sum)))
		}
		if err := f.SetProvider(lock); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

// BenchmarkBytes renders the lock file of 50 providers of 8 hashes.
func BenchmarkBytes(b *testing.B) {
	f := benchFile(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Bytes()
	}
}

// BenchmarkWriteFile writes the lock file of 50 providers of 8 hashes,
// fsync included.
func BenchmarkWriteFile(b *testing.B) {
	f := benchFile(b)
	path := filepath.Join(b.TempDir(), ".terraform.lock.hcl")
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteFile(path, f); err != nil {
			b.Fatal(err)
		}
	}
}
