package httpx

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strconv"
	"testing"
)

// sizedServer serves data, announcing its size unless chunked.
func sizedServer(t *testing.T, data []byte, chunked bool) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if !chunked {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		}
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		w.Write(data[len(data)/2:])
	})
}

// A memory spool keeps a small download in memory, with no file made, and
// its bytes count against the process's budget until released; a large
// one, one of unknown size, and one the budget has no room for go to the
// file it makes.
func TestMemorySpool(t *testing.T) {
	old := budget
	budget = &memBudget{left: 3 << 20}
	t.Cleanup(func() { budget = old })
	download := func(t *testing.T, data []byte, chunked bool) (*Spool, bool) {
		t.Helper()
		s := sizedServer(t, data, chunked)
		made := false
		sp := MemorySpool(func() (*os.File, error) {
			made = true
			return tempFile(t), nil
		})
		n, err := New(fast(s.Client())).DownloadSpool(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, sp, nil, nil)
		if err != nil || n != int64(len(data)) {
			t.Fatalf("DownloadSpool = %d, %v; want %d", n, err, len(data))
		}
		got := sp.Data()
		if made {
			if got != nil {
				t.Fatal("a file was made, and Data is set")
			}
			b, err := os.ReadFile(sp.File().Name())
			if err != nil {
				t.Fatal(err)
			}
			got = b
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("got %d bytes, not the %d sent", len(got), len(data))
		}
		return sp, !made
	}
	small := randomBytes(MemoryMax, 1)
	a, inMem := download(t, small, false)
	if !inMem || a.File() != nil {
		t.Fatalf("a download of %d bytes went to a file", len(small))
	}
	if budget.left != 1<<20 {
		t.Fatalf("budget left %d, want %d", budget.left, 1<<20)
	}
	if _, inMem := download(t, small, false); inMem {
		t.Fatal("a download beyond the budget went to memory")
	}
	if _, inMem := download(t, randomBytes(1<<10, 2), true); inMem {
		t.Fatal("a download of unknown size went to memory")
	}
	if _, inMem := download(t, randomBytes(MemoryMax+1, 3), false); inMem {
		t.Fatal("a download larger than MemoryMax went to memory")
	}
	a.Release()
	a.Release()
	if budget.left != 3<<20 {
		t.Fatalf("budget left %d after Release, want all of %d", budget.left, 3<<20)
	}
	if b, inMem := download(t, small, false); !inMem {
		t.Fatal("the budget released did not serve again")
	} else {
		b.Release()
	}
	// A file spool never keeps its download in memory.
	s := sizedServer(t, small, false)
	f := tempFile(t)
	if _, err := New(fast(s.Client())).Download(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, f, nil, nil); err != nil {
		t.Fatal(err)
	}
	if info, err := f.Stat(); err != nil || info.Size() != int64(len(small)) {
		t.Fatalf("file: %v, %v", info, err)
	}
}
