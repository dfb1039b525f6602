package httpx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// streamServer serves data: whole (a GET without Range) in two halves, the
// second only once release is closed; ranged requests at once, through
// http.ServeContent, with alter applied to what they send.
func streamServer(t *testing.T, data []byte, release <-chan struct{}, alter func([]byte)) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			b := bytes.Clone(data)
			if alter != nil {
				alter(b)
			}
			http.ServeContent(w, r, "p.zip", time.Time{}, bytes.NewReader(b))
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		half := len(data) / 2
		w.Write(data[:half])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			panic(http.ErrAbortHandler)
		}
		w.Write(data[half:])
	})
}

// A Stream is read while it downloads: its first half and its tail are
// readable while the server holds back the second half, a read of the
// second half waits for it, and Wait checks the tail against the file.
func TestStreamReadsAsItArrives(t *testing.T) {
	data := randomBytes(1<<20, 1)
	release := make(chan struct{})
	s := streamServer(t, data, release, nil)
	c := New(fast(s.Client()))
	f := tempFile(t)
	st := c.StartDownload(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, FileSpool(f), nil, nil, 64<<10, 1<<10)
	size, ok := st.Size()
	if !ok || size != int64(len(data)) {
		t.Fatalf("Size = %d, %v; want %d, true", size, ok, len(data))
	}
	read := func(off, n int) []byte {
		b := make([]byte, n)
		m, err := st.ReadAt(b, int64(off))
		if err != nil && !(err == io.EOF && off+n >= len(data)) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", off, n, m, err)
		}
		return b[:m]
	}
	// The server holds the second half: the first and the tail are there.
	if got := read(0, 4096); !bytes.Equal(got, data[:4096]) {
		t.Error("the first bytes differ")
	}
	if got := read(len(data)-1000, 1000); !bytes.Equal(got, data[len(data)-1000:]) {
		t.Error("the tail differs")
	}
	// A read across the rest waits until the server sends it.
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(data)/2)
		n, _ := st.ReadAt(b, int64(len(data)/4))
		got <- b[:n]
	}()
	select {
	case <-got:
		t.Fatal("a read of bytes not yet sent returned")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if b := <-got; !bytes.Equal(b, data[len(data)/4:len(data)/4+len(data)/2]) {
		t.Error("the middle differs")
	}
	if n, err := st.Wait(); err != nil || n != int64(len(data)) {
		t.Errorf("Wait = %d, %v", n, err)
	}
	if s.requests() != 2 {
		t.Errorf("%d requests, want 2", s.requests())
	}
}

// A ranged response whose bytes differ from the download's: Wait says so.
func TestStreamInconsistentTail(t *testing.T) {
	data := randomBytes(256<<10, 2)
	release := make(chan struct{})
	close(release)
	s := streamServer(t, data, release, func(b []byte) { b[len(b)-1] ^= 1 })
	c := New(fast(s.Client()))
	st := c.StartDownload(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, FileSpool(tempFile(t)), nil, nil, 64<<10, 1<<10)
	if _, ok := st.Size(); !ok {
		t.Fatal("no tail")
	}
	if _, err := st.Wait(); !errors.Is(err, ErrInconsistent) {
		t.Errorf("Wait = %v, want ErrInconsistent", err)
	}
}

// Below the size asked for, or from a server without ranges, there is no
// tail: Size says so and the download completes as Download's would.
func TestStreamWithoutTail(t *testing.T) {
	data := make([]byte, 200<<10)
	release := make(chan struct{})
	close(release)
	for name, tc := range map[string]struct {
		min     int64
		noRange bool
	}{"small": {1 << 30, false}, "no ranges": {1 << 10, true}} {
		t.Run(name, func(t *testing.T) {
			var s *server
			if tc.noRange {
				s = newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(data) })
			} else {
				s = streamServer(t, data, release, nil)
			}
			st := New(fast(s.Client())).StartDownload(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 1 << 30}, FileSpool(tempFile(t)), nil, nil, 64<<10, tc.min)
			if _, ok := st.Size(); ok {
				t.Error("Size reports a tail")
			}
			if n, err := st.Wait(); err != nil || n != int64(len(data)) {
				t.Errorf("Wait = %d, %v", n, err)
			}
		})
	}
}

// randomBytes returns n pseudo-random bytes, the same for one seed.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// A download announced larger than its limit fails before anything else
// is asked: no ranged request for its end.
func TestStreamTooLargeAsksNoRange(t *testing.T) {
	data := randomBytes(256<<10, 3)
	release := make(chan struct{})
	close(release)
	s := streamServer(t, data, release, nil)
	st := New(fast(s.Client())).StartDownload(context.Background(), Request{URL: s.url(t, "/p.zip"), MaxBytes: 100 << 10}, FileSpool(tempFile(t)), nil, nil, 64<<10, 1<<10)
	if _, ok := st.Size(); ok {
		t.Error("Size reports a tail")
	}
	if _, err := st.Wait(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Wait = %v, want ErrTooLarge", err)
	}
	if n := s.requests(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
