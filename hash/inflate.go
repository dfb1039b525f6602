package hash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sync/atomic"

	"github.com/tflock/tflock/hash/internal/flate"
	"golang.org/x/sync/errgroup"
)

// Which decoder inflates a deflated entry. The central directory gives
// every entry's size, so hash/internal/flate, which decodes into an output
// of that size, serves:
//
//   - a small entry (held whole) whose size is between wholeMin and
//     wholeSmall: decoded whole into the worker's buffer;
//   - a streamed entry: decoded in chunks after a 32 KiB window, two chunk
//     buffers in turn, one being hashed (and written) while the other is
//     decoded into;
//   - with mapMin lowered (the tests and benchmarks do), a streamed entry
//     being extracted, whose size is at least mapMin, on platforms that can
//     map files (see mapOutput): decoded whole into the output file, mapped
//     into memory, while a second goroutine hashes the part of it that is
//     final.
//
// The mapped path is off by default. Each page of a file mapping is
// zeroed by the kernel when it is faulted in and then written by the
// decoder, where write(2) copies the chunk into the page cache once; in a
// whole process, cold and after sync (as a user's first init runs), the
// mapped output of a 400 MiB provider cost about 0.4–0.6 s more system
// time than the chunks written (see hash/BENCHMARKS.md, issue 27), and
// kept more resident (about 53 MiB against 31 MiB at its peak).
//
// klauspost/compress/flate stays the streaming fallback for small entries
// outside that range: below wholeMin, where building the new decoder's
// larger tables costs more than it saves (measured: klauspost is about 10%
// faster on entries of 1–4 KiB, the new decoder 1.3× faster at 16 KiB), and
// above wholeSmall, kept out so that each worker's buffer stays small.
// Stored entries are copied.
//
// Variables so that tests can drive entries through every path.
var (
	wholeMin   int64 = 8 << 10
	wholeSmall int64 = 256 << 10
	mapMin     int64 = math.MaxInt64 // off (see above)
)

// mappedEntries counts the entries decoded into mapped files, for tests.
var mappedEntries atomic.Int64

const (
	chunkSize = 1 << 20 // output chunk of a streamed entry decoded in chunks
	mapStep   = 1 << 20 // output decoded into a mapped file between two progress reports
)

// populateAhead is how far ahead of the decoder the pages of a mapped
// output file are faulted in; 0 turns it off. A variable for the
// benchmarks that measure it.
var populateAhead = 8 << 20

// releaseSpan is how much of a mapped output file, decoded beyond the
// DEFLATE window and hashed, is released from the process at a time (see
// release), so that the resident part of the mapping stays about
// populateAhead+releaseSpan whatever the entry's size; 0 turns it off.
// A variable for the tests and benchmarks that measure it.
var releaseSpan = 8 << 20

// releasedBytes counts the bytes of mapped output released, for tests.
var releasedBytes atomic.Int64

// inflateErr turns an error of hash/internal/flate into the package's
// errors for e's contents.
func inflateErr(err error, e *zipEntry) error {
	var ce *flate.CorruptInputError
	switch {
	case errors.Is(err, flate.ErrTooLong):
		return formatErr("contents longer than the declared size %d", e.usize)
	case errors.Is(err, flate.ErrTooShort):
		return formatErr("contents shorter than the declared size %d", e.usize)
	case err == io.ErrUnexpectedEOF:
		return formatErr("compressed data ends early")
	case errors.As(err, &ce):
		return formatErr("corrupt compressed data: %v", err)
	}
	return err
}

// wholeDecoder decodes small entries whole; one per worker.
type wholeDecoder struct {
	d   flate.Decoder
	buf []byte
}

// decode inflates data, the compressed contents of st's entry, whose size
// is at most wholeSmall, into st.
func (w *wholeDecoder) decode(st *entryState, data []byte) error {
	n := int(st.e.usize)
	if cap(w.buf) < n {
		w.buf = make([]byte, n)
	}
	out := w.buf[:n]
	w.d.ResetBytes(data)
	if err := w.d.DecodeAll(out, 0, nil); err != nil {
		return inflateErr(err, st.e)
	}
	return st.write(out)
}

// inflateChunks starts in g the goroutines that decode a streamed deflated
// entry read from cr in chunks and digest (and write) them into st.
// streams is released when done.
func inflateChunks(ctx context.Context, g *errgroup.Group, label string, e *zipEntry, st *entryState, sums []fileSum, cr *chanReader, in <-chan []byte, inFree chan<- []byte, streams <-chan struct{}) {
	chunks := make(chan []byte, 1)
	released := make(chan struct{}, 2)
	var failed bool // set by the decoder before it closes chunks
	g.Go(func() error {
		defer close(chunks)
		defer drain(in, inFree)
		var d flate.Decoder
		d.Reset(cr)
		size := int(min(max(e.usize, 1), chunkSize))
		bufs := [2][]byte{make([]byte, flate.WindowSize+size), make([]byte, flate.WindowSize+size)}
		pos, cur := 0, 0
		for sent := 0; ; sent++ {
			start := pos
			p, done, err := d.Decode(bufs[cur], pos)
			if err != nil {
				failed = true
				if cr.err != nil {
					return nil // canceled
				}
				return &PackageError{Path: label, Entry: e.name, Err: inflateErr(err, e)}
			}
			if p > start {
				select {
				case chunks <- bufs[cur][start:p]:
				case <-ctx.Done():
					failed = true
					return nil
				}
			}
			if done {
				return nil
			}
			// The other buffer is free once the chunk before this one is
			// digested.
			if sent >= 1 {
				select {
				case <-released:
				case <-ctx.Done():
					failed = true
					return nil
				}
			}
			next := 1 - cur
			h := min(p, flate.WindowSize)
			copy(bufs[next], bufs[cur][p-h:p])
			pos, cur = h, next
		}
	})
	g.Go(func() error {
		defer func() {
			<-streams
			st.abort()
		}()
		var werr error
		for b := range chunks {
			if werr == nil {
				werr = st.write(b)
			}
			released <- struct{}{}
			if werr != nil {
				return &PackageError{Path: label, Entry: e.name, Err: werr}
			}
		}
		if failed || ctx.Err() != nil {
			return nil // the decoder reports its error
		}
		return finishEntry(st, label, sums)
	})
}

// inflateMapped starts in g the goroutines that decode a streamed deflated
// entry read from cr into m, the memory mapping of the output file f of
// e's size, and digest the output as it becomes final. unmap releases m.
// streams is released when done.
func inflateMapped(ctx context.Context, g *errgroup.Group, label string, e *zipEntry, st *entryState, sums []fileSum, f *os.File, m []byte, unmap func() error, cr *chanReader, in <-chan []byte, inFree chan<- []byte, streams <-chan struct{}) {
	mappedEntries.Add(1)
	progress := make(chan int, 8)
	var failed bool // set by the decoder before it closes progress
	g.Go(func() (err error) {
		defer close(progress)
		defer drain(in, inFree)
		defer func() {
			if err != nil {
				failed = true
			}
		}()
		var d flate.Decoder
		d.Reset(cr)
		err = faultErr(func() error {
			return d.DecodeAll(m, mapStep, func(n int) error {
				select {
				case progress <- n:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
		})
		if err != nil {
			if cr.err != nil || ctx.Err() != nil {
				return nil // canceled
			}
			return &PackageError{Path: label, Entry: e.name, Err: inflateErr(err, e)}
		}
		return nil
	})
	g.Go(func() error {
		defer func() { <-streams }()
		var werr error
		prev := 0
		// Fault the pages in ahead of the decoder, populateAhead bytes at
		// a time, while it works on the first ones.
		populated, canPopulate := 0, populateAhead > 0
		prefault := func(upTo int) {
			for canPopulate && populated < min(upTo, len(m)) {
				end := min(populated+populateAhead, len(m))
				canPopulate = populate(m[populated:end])
				populated = end
			}
		}
		prefault(populateAhead)
		// Release the pages that neither goroutine reads again: hashed,
		// and further behind the decoder than the DEFLATE window its
		// back-references reach into. Whole pages of the mapping (which
		// starts on a page), releaseSpan bytes at a time.
		page := os.Getpagesize()
		released, canRelease := 0, releaseSpan > 0
		releaseUpTo := func(n int) {
			upTo := (n - flate.WindowSize) / page * page
			if canRelease && upTo-released >= releaseSpan {
				if canRelease = release(m[released:upTo]); canRelease {
					releasedBytes.Add(int64(upTo - released))
				}
				released = upTo
			}
		}
		// Read every report, so that the mapping outlives the decoder.
		for n := range progress {
			prefault(n + populateAhead)
			if werr == nil {
				werr = faultErr(func() error { return st.write(m[prev:n]) })
				prev = n
				releaseUpTo(n)
			}
		}
		uerr := unmap()
		cerr := f.Close()
		switch {
		case werr != nil:
			return &PackageError{Path: label, Entry: e.name, Err: werr}
		case failed || ctx.Err() != nil:
			return nil // the decoder reports its error
		case uerr != nil:
			return &PackageError{Path: label, Entry: e.name, Err: uerr}
		case cerr != nil:
			return &PackageError{Path: label, Entry: e.name, Err: cerr}
		}
		return finishEntry(st, label, sums)
	})
}

// finishEntry checks a digested entry and records its sum.
func finishEntry(st *entryState, label string, sums []fileSum) error {
	sum, err := st.finish()
	if err != nil {
		return &PackageError{Path: label, Entry: st.e.name, Err: err}
	}
	sums[st.e.slot] = fileSum{name: st.e.path, sum: sum}
	return nil
}

// drain returns the compressed blocks the decoder left unread (data after
// the end of the deflate stream), so that the feeder never blocks.
func drain(in <-chan []byte, inFree chan<- []byte) {
	for b := range in {
		inFree <- b[:cap(b)]
	}
}

// faultErr runs f, turning a memory fault (a mapped file that cannot be
// written or read, such as a full disk) into an error instead of a crash.
func faultErr(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(interface{ Addr() uintptr }); ok {
				err = fmt.Errorf("memory fault in the mapped output file at %#x", re.Addr())
				return
			}
			panic(r)
		}
	}()
	return f()
}
