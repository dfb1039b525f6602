package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// ErrRestarted is returned by [Stream.ReadAt] once the download had to start
// again (a retried attempt rewrites the file from its first byte): what a
// reader got before may not be what the file finally holds. The reader
// waits for [Stream.Wait] and reads the file from the start. It wraps
// [source.ErrArchiveRestarted].
var ErrRestarted = fmt.Errorf("download restarted: %w", source.ErrArchiveRestarted)

// TailBytes is how much of a large zip's end the sources ask for apart
// ([Client.StartDownload]'s tail), so that its end record and, usually,
// its central directory are there before the rest: the window in which
// the zip reader of package hash looks for the end record.
const TailBytes = hash.ZipTail

// StreamMin is the smallest package the sources hand over while it
// downloads ([Client.StartDownload]'s minSize): below it the download is
// short anyway, and the extra request for its end would cost more than it
// saves. A variable so that the sources' tests can lower it.
var StreamMin int64 = 8 << 20

// Stream is a download running in the background into a file, readable as
// it arrives: [Client.StartDownload].
//
// A zip archive is read from its end (the central directory) first. So that
// a reader can start before the last byte has arrived, a Stream of a large
// response also asks for its last tail bytes in a second, ranged request;
// ReadAt serves that range from them until the file has it, and Wait checks,
// once the file is complete, that the file holds those very bytes.
type Stream struct {
	sp       *Spool
	tailSize int64

	mu      sync.Mutex
	changed *sync.Cond
	written int64 // bytes of the current attempt in f
	attempt int   // attempts started
	done    bool
	n       int64
	err     error

	tailDone chan struct{} // closed once the tail request ended (or was not made)
	tail     []byte        // the archive's last bytes, when the server sent them
	total    int64         // the archive's size, with tail
	end      chan struct{} // closed when the download ended
}

// StartDownload starts downloading r into sp (and w, as
// [Client.DownloadSpool] does) in the background and returns at once.
// When the response announces at least minSize bytes, the last tail bytes
// are asked for at the same time with a ranged GET (Range:
// bytes=SIZE-tail-SIZE-1): then the download goes to sp's file,
// [Stream.Size] reports the size and [Stream.ReadAt] reads the archive as
// it arrives. The download ends with ctx; Wait must be called.
func (c *Client) StartDownload(ctx context.Context, r Request, sp *Spool, w io.Writer, reset func(), tail, minSize int64) *Stream {
	s := &Stream{sp: sp, tailSize: tail, tailDone: make(chan struct{}), end: make(chan struct{})}
	s.changed = sync.NewCond(&s.mu)
	var once sync.Once
	noTail := func() { once.Do(func() { close(s.tailDone) }) }
	started := r.Started
	r.Started = func(total int64) {
		if started != nil {
			started(total)
		}
		if total < minSize || tail <= 0 || tail >= total {
			noTail()
			return
		}
		// Read as it arrives: from the file, made before the tail is
		// asked for, so that it is there once Size reports the tail.
		// An earlier attempt may have gone to memory: its budget is given
		// back now, since the caller of a stream handed over as it
		// arrives never calls Release.
		sp.fileOnly = true
		sp.Release()
		if sp.makeFile() != nil {
			noTail() // the download reports the error
			return
		}
		once.Do(func() {
			go func() {
				defer close(s.tailDone)
				b, err := c.getRange(ctx, r, total-tail, total)
				if err == nil {
					s.mu.Lock()
					s.tail, s.total = b, total
					s.changed.Broadcast()
					s.mu.Unlock()
				}
			}()
		})
	}
	rewind := func() {
		s.mu.Lock()
		s.attempt++
		s.written = 0
		s.changed.Broadcast()
		s.mu.Unlock()
		if reset != nil {
			reset()
		}
	}
	count := writerFunc(func(p []byte) (int, error) {
		s.mu.Lock()
		s.written += int64(len(p))
		s.changed.Broadcast()
		s.mu.Unlock()
		return len(p), nil
	})
	dst := io.Writer(count)
	if w != nil {
		dst = io.MultiWriter(w, count)
	}
	go func() {
		n, err := c.DownloadSpool(ctx, r, sp, dst, rewind)
		noTail()
		s.mu.Lock()
		s.done, s.n, s.err = true, n, err
		s.changed.Broadcast()
		s.mu.Unlock()
		close(s.end)
	}()
	return s
}

// Size waits until the response's headers and, for a large one, its tail
// have arrived, and returns the archive's size; ok is false when the tail
// did not come (a small or unannounced size, a server without ranges, a
// failure), and then the file can be read only after [Stream.Wait].
func (s *Stream) Size() (size int64, ok bool) {
	<-s.tailDone
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.tail != nil
}

// ReadAt reads len(p) bytes at off, waiting until they have arrived. It
// returns the download's error if it failed first, [ErrRestarted] if the
// download started again after its first attempt, and io.EOF past the end.
func (s *Stream) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	first := s.attempt
	total, tail := s.total, s.tail
	tailOff := total - int64(len(tail))
	s.mu.Unlock()
	if tail == nil {
		return 0, errors.New("httpx: Stream.ReadAt without a tail (see Stream.Size)")
	}
	if off >= total {
		return 0, io.EOF
	}
	want := p
	var eof error
	if off+int64(len(p)) > total {
		want, eof = p[:total-off], io.EOF
	}
	n := 0
	// The part before the tail comes from the file, once written.
	if off < tailOff {
		head := want[:min(int64(len(want)), tailOff-off)]
		end := off + int64(len(head))
		s.mu.Lock()
		for !s.done && s.written < end && s.attempt == first {
			s.changed.Wait()
		}
		restarted, failed, written := s.attempt != first, s.err, s.written
		s.mu.Unlock()
		switch {
		case restarted:
			return 0, ErrRestarted
		case written < end && failed != nil:
			return 0, failed
		case written < end:
			return 0, io.ErrUnexpectedEOF
		}
		m, err := s.sp.f.ReadAt(head, off)
		// A restart empties the file after it counts the attempt (see
		// DownloadSpool's rewind): bytes read while or after it did may
		// not be the archive's.
		s.mu.Lock()
		restarted = s.attempt != first
		s.mu.Unlock()
		if restarted {
			return 0, ErrRestarted
		}
		n += m
		if err != nil {
			return n, err
		}
	}
	// The rest from the tail the server sent.
	if int64(n) < int64(len(want)) {
		n += copy(want[n:], tail[off+int64(n)-tailOff:])
	}
	return n, eof
}

// Wait waits for the download to end and returns the number of bytes
// written and its error. With a tail, it also checks that the file is as
// long as the ranged response said and ends with the bytes it sent.
func (s *Stream) Wait() (int64, error) {
	<-s.end
	<-s.tailDone
	s.mu.Lock()
	n, err, tail, total := s.n, s.err, s.tail, s.total
	s.mu.Unlock()
	if err != nil || tail == nil {
		return n, err
	}
	if n != total {
		return n, fmt.Errorf("%w: the download is %d bytes, its ranged request said %d", ErrInconsistent, n, total)
	}
	got := make([]byte, len(tail))
	if _, err := s.sp.f.ReadAt(got, total-int64(len(tail))); err != nil {
		return n, err
	}
	if !bytes.Equal(got, tail) {
		return n, fmt.Errorf("%w: the last %d bytes of the download differ from those of its ranged request", ErrInconsistent, len(tail))
	}
	return n, nil
}

// ErrInconsistent: a server sent different bytes for the same part of one
// file in two responses. It wraps [source.ErrChecksumMismatch].
var ErrInconsistent = fmt.Errorf("inconsistent responses: %w", source.ErrChecksumMismatch)

// getRange fetches the bytes [from, to) of r.URL, whose size is to: the
// answer must be a 206 whose Content-Range says exactly that.
func (c *Client) getRange(ctx context.Context, r Request, from, to int64) ([]byte, error) {
	var out []byte
	r.Started = nil
	r.byteRange = "bytes=" + strconv.FormatInt(from, 10) + "-" + strconv.FormatInt(to-1, 10)
	err := c.attempts(ctx, r, c.o.RequestTimeout, nil, func(a *attempt, resp *http.Response) error {
		if resp.StatusCode != http.StatusPartialContent {
			return fmt.Errorf("GET %s: %w: status %d", Redact(r.URL), errNoRange, resp.StatusCode)
		}
		want := fmt.Sprintf("bytes %d-%d/%d", from, to-1, to)
		if got := strings.TrimSpace(resp.Header.Get("Content-Range")); got != want {
			return fmt.Errorf("GET %s: %w: Content-Range %q, want %q", Redact(r.URL), errNoRange, got, want)
		}
		b, err := readBody(resp, to-from)
		if err != nil {
			return a.classify(r.URL, err)
		}
		if int64(len(b)) != to-from {
			return fmt.Errorf("GET %s: %w: %d bytes, want %d", Redact(r.URL), errNoRange, len(b), to-from)
		}
		out = b
		return nil
	})
	return out, err
}

var errNoRange = errors.New("no ranged response")

// Pending hands a Stream with a tail (see [Stream.Size]) over as the
// [source.PendingArchive] of its file f, which it owns from then on: Wait
// ends the download, stops its context (stop), closes f, removes it if the
// download failed, and calls done (which may be nil) if it succeeded.
// Errors of the download wrap the source package's errors (see Download):
// a package over its limit [source.ErrTooLarge], a server that
// contradicted itself [source.ErrChecksumMismatch], a restart
// [source.ErrArchiveRestarted].
func (s *Stream) Pending(f *os.File, stop, done func()) source.PendingArchive {
	return &pending{st: s, f: f, stop: stop, done: done}
}

type pending struct {
	st         *Stream
	f          *os.File
	stop, done func()
}

func (p *pending) Size() int64 {
	n, _ := p.st.Size()
	return n
}

func (p *pending) ReadAt(b []byte, off int64) (int, error) { return p.st.ReadAt(b, off) }

func (p *pending) Wait() error {
	_, err := p.st.Wait()
	p.stop()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p.f.Name())
		return err
	}
	if p.done != nil {
		p.done()
	}
	return nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
