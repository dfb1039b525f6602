package httpx

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// withBudget gives the test a budget of its own.
func withBudget(t *testing.T, n int64) *memBudget {
	t.Helper()
	old := budget
	budget = &memBudget{left: n}
	t.Cleanup(func() { budget = old })
	return budget
}

// Attack: a hostile server announces a small package, sends part of it
// (the first attempt goes to memory and takes budget), then, on the
// retry, announces a large one, which a Stream hands over as it arrives
// (from the file): the caller of a stream handed over never calls
// Release, so the budget of the first attempt must be given back when the
// spool turns to its file. (Broken before: 1000 bytes leaked per such
// download, until the budget was spent and no download went to memory.)
func TestAttackStreamGivesBackBudgetOfAnEarlierAttempt(t *testing.T) {
	b := withBudget(t, MemoryBudget)
	large := randomBytes(256<<10, 7)
	var n atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			http.ServeContent(w, r, "p.zip", time.Time{}, bytes.NewReader(large))
			return
		}
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", "1000")
			w.Write(large[:10])
			return // shorter than announced: retried
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(large)))
		w.Write(large)
	})
	sp := MemorySpool(func() (*os.File, error) { return tempFile(t), nil })
	st := New(fast(s.Client())).StartDownload(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, sp, nil, nil, 64<<10, 128<<10)
	if _, err := st.Wait(); err != nil {
		t.Fatal(err)
	}
	if n.Load() < 2 {
		t.Fatalf("%d attempts, want a retry", n.Load())
	}
	if sp.Data() != nil {
		t.Fatal("the large attempt's bytes are in memory")
	}
	if got, err := os.ReadFile(sp.File().Name()); err != nil || !bytes.Equal(got, large) {
		t.Fatalf("file holds %d bytes (%v), want the %d of the last attempt", len(got), err, len(large))
	}
	// No Release: a stream's caller hands the file over as pending.
	if b.left != MemoryBudget {
		t.Fatalf("budget left %d after the stream went to its file, want all of %d", b.left, MemoryBudget)
	}
}

// Attack: Content-Length says small but the server sends more, less, or
// other bytes on a retry: the memory spool holds exactly the bytes of the
// last, complete attempt (more than announced is cut by the client;
// less is retried, and the retry's bytes replace the first attempt's).
func TestAttackMemorySpoolHoldsOnlyTheLastAttempt(t *testing.T) {
	withBudget(t, MemoryBudget)
	good := randomBytes(4000, 8)
	other := randomBytes(4000, 9)
	var n atomic.Int32
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1: // other bytes, cut short
			w.Header().Set("Content-Length", strconv.Itoa(len(good)))
			w.Write(other[:3000])
		case 2: // announces less than it sends
			w.Header().Set("Content-Length", strconv.Itoa(len(good)))
			w.(http.Flusher).Flush()
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("no hijacker")
				return
			}
			conn, buf, err := hj.Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			buf.Write(good)
			buf.Write([]byte("EXTRA BYTES THE ANNOUNCED SIZE DOES NOT COVER"))
			buf.Flush()
		}
	})
	sp := MemorySpool(func() (*os.File, error) { return tempFile(t), nil })
	defer sp.Release()
	got, err := New(fast(s.Client())).DownloadSpool(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, sp, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != int64(len(good)) || !bytes.Equal(sp.Data(), good) {
		t.Fatalf("spool holds %d bytes (n %d), not the %d of the complete attempt", len(sp.Data()), got, len(good))
	}
}

// Attack: many small downloads at once cannot hold more than the budget
// in memory, and all of it comes back once they are released.
func TestAttackManySmallDownloadsStayWithinBudget(t *testing.T) {
	b := withBudget(t, 64<<10)
	data := randomBytes(10<<10, 10)
	s := sizedServer(t, data, false)
	c := New(fast(s.Client()))
	var spools []*Spool
	inMem := 0
	for range 20 {
		sp := MemorySpool(func() (*os.File, error) { return tempFile(t), nil })
		if _, err := c.DownloadSpool(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, sp, nil, nil); err != nil {
			t.Fatal(err)
		}
		if sp.Data() != nil {
			inMem++
		}
		if b.left < 0 {
			t.Fatalf("budget overdrawn: %d", b.left)
		}
		spools = append(spools, sp)
	}
	if inMem != 6 {
		t.Fatalf("%d downloads in memory, want 6 (64 KiB / 10 KiB)", inMem)
	}
	for _, sp := range spools {
		sp.Release()
	}
	if b.left != 64<<10 {
		t.Fatalf("budget left %d after every Release, want %d", b.left, 64<<10)
	}
}

// Attack: a server that gzips the package (Content-Encoding: gzip, its
// Content-Length the compressed size): what the spool holds is the
// package's bytes (the transport decompresses what it asked to be
// compressed, and its size is then unknown: a file), never a mix, and
// the budget is whole once released.
func TestAttackGzipEncodedDownload(t *testing.T) {
	b := withBudget(t, MemoryBudget)
	data := bytes.Repeat([]byte("provider package "), 4000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(gz.Len()))
		w.Write(gz.Bytes())
	})
	sp := MemorySpool(func() (*os.File, error) { return tempFile(t), nil })
	n, err := New(fast(s.Client())).DownloadSpool(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, sp, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := sp.Data()
	if got == nil {
		if got, err = os.ReadFile(sp.File().Name()); err != nil {
			t.Fatal(err)
		}
	}
	if n != int64(len(got)) || !bytes.Equal(got, data) && !bytes.Equal(got, gz.Bytes()) {
		t.Fatalf("spool holds %d bytes (n %d): neither the package nor its gzip", len(got), n)
	}
	sp.Release()
	if b.left != MemoryBudget {
		t.Fatalf("budget left %d, want %d", b.left, MemoryBudget)
	}
}
