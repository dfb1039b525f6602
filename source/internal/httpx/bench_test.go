package httpx

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkDownloadFile downloads a 160 MiB package from a loopback TLS
// server into a new file, then closes and removes the file, as a cache
// fill does with a provider's zip once it is read. file=truncated is the
// baseline: the file is truncated to nothing before the download, as
// Download did before each attempt until it learned not to truncate an
// empty file. On ext4 (auto_da_alloc) a file truncated to nothing has its
// blocks allocated and written back when it is closed, and its removal
// waits for that writeback.
func BenchmarkDownloadFile(b *testing.B) {
	data := randomBytes(160<<20, 7)
	srv := newBenchServer(b, data)
	c := New(fast(srv.Client()))
	u := srv.url(b, "/p.zip")
	dir := b.TempDir()
	for _, mode := range []string{"truncated", "fresh"} {
		b.Run("file="+mode, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				f, err := os.CreateTemp(dir, "p-*.zip")
				if err != nil {
					b.Fatal(err)
				}
				if mode == "truncated" {
					if err := f.Truncate(0); err != nil {
						b.Fatal(err)
					}
				}
				n, err := c.Download(context.Background(), Request{URL: u, MaxBytes: 1 << 30}, f, nil, nil)
				if err != nil || n != int64(len(data)) {
					b.Fatalf("Download = %d, %v", n, err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
				if err := os.Remove(filepath.Join(dir, filepath.Base(f.Name()))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// newBenchServer serves data at every path.
func newBenchServer(b *testing.B, data []byte) *server {
	return newServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	})
}
