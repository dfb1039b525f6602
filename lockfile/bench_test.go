package lockfile

import (
	"fmt"
	"path/filepath"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// BenchmarkWriteFile writes the lock file of a providers lock of 50
// providers for 4 platforms (an h1: and a zh: per platform: about 35 KB).
// The baseline, way=sequential, is how WriteFile worked before: the
// parse-back first, then the temporary file written, flushed and renamed;
// way=overlapped is WriteFile, which parses back while the temporary file
// is written and flushed.
func BenchmarkWriteFile(b *testing.B) {
	f := New()
	for i := range 50 {
		p := &ProviderLock{
			Addr:        tfaddr.NewProvider("registry.example.test", "acme", fmt.Sprintf("p%02d", i)),
			Version:     versions.MustParse("1.1.0"),
			Constraints: "~> 1.0",
		}
		for j := range 8 {
			scheme := hash.SchemeH1
			if j%2 == 1 {
				scheme = hash.SchemeZH
			}
			p.Hashes = append(p.Hashes, hash.NewHash(scheme, [32]byte{byte(i), byte(j), 1}))
		}
		f.SetProvider(p)
	}
	path := filepath.Join(b.TempDir(), ".terraform.lock.hcl")
	b.Run("way=sequential", func(b *testing.B) {
		b.SetBytes(int64(len(f.Bytes())))
		for b.Loop() {
			data := f.Bytes()
			if _, err := (ParseOptions{Lenient: true}).Parse(data, path); err != nil {
				b.Fatal(err)
			}
			if err := writeFileAtomic(path, data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("way=overlapped", func(b *testing.B) {
		b.SetBytes(int64(len(f.Bytes())))
		for b.Loop() {
			if err := WriteFile(path, f); err != nil {
				b.Fatal(err)
			}
		}
	})
}
