package hash

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	stdhash "hash"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/klauspost/compress/flate"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// ZipSum holds the two hashes of a zip archive.
type ZipSum struct {
	H1 Hash // h1 of the archive's files (directory entries ignored)
	ZH Hash // SHA-256 of the archive's bytes
}

// Hashes returns the two hashes, h1 first, as a lock file lists a package's
// hashes.
func (s ZipSum) Hashes() []Hash { return []Hash{s.H1, s.ZH} }

// H1Zip returns the h1 hash of the files in the zip archive at path, with
// the zero [Options].
func H1Zip(path string) (Hash, error) {
	s, err := HashZip(path)
	return s.H1, err
}

// HashZip returns the h1 and zh hashes of the zip archive at path in one
// read, with the zero [Options].
func HashZip(path string) (ZipSum, error) {
	return Options{}.HashZip(context.Background(), path)
}

// ZH returns the zh hash of the file at path: the SHA-256 of its bytes. It
// does not look inside the archive.
func ZH(path string) (Hash, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, onlyReader{f}, make([]byte, 1<<20)); err != nil {
		return "", &PackageError{Path: path, Err: err}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return NewHash(SchemeZH, sum), nil
}

// onlyReader hides an *os.File's WriteTo so that io.CopyBuffer uses the
// given buffer.
type onlyReader struct{ r io.Reader }

func (r onlyReader) Read(p []byte) (int, error) { return r.r.Read(p) }

// HashZip returns the h1 and zh hashes of the zip archive at path, reading
// it once (see the package documentation).
func (o Options) HashZip(ctx context.Context, path string) (ZipSum, error) {
	return withFile(path, func(f *os.File, size int64) (ZipSum, error) {
		return o.hashZip(ctx, path, f, size, nil)
	})
}

// withFile runs fn on the file at path, open, and its size.
func withFile(path string, fn func(f *os.File, size int64) (ZipSum, error)) (ZipSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return ZipSum{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ZipSum{}, &PackageError{Path: path, Err: err}
	}
	return fn(f, info.Size())
}

// HashZipReader is [Options.HashZip] for an archive of the given size read
// from r. It reads the central directory at the end, then every byte once in
// order. Errors name the archive "zip archive".
func (o Options) HashZipReader(ctx context.Context, r io.ReaderAt, size int64) (ZipSum, error) {
	return o.hashZip(ctx, "zip archive", r, size, nil)
}

// entryOutput opens where an entry's contents go besides its digest (the
// install path), or is nil.
type entryOutput func(e *zipEntry) (io.WriteCloser, error)

// smallEntry is the compressed size up to which an entry is read whole and
// handed to a worker; larger entries are streamed. A variable so that tests
// can drive every entry through the streaming path.
var smallEntry int64 = 1 << 20

const (
	blockSize = 512 << 10 // streaming block size, for compressed input and inflated output
	blocks    = 4         // blocks in flight per direction for a streamed entry
)

// smallBudget bounds the compressed bytes of small entries read but not yet
// digested, so that memory stays bounded on machines with many cores too
// (each small entry is held whole). A variable so that tests can make the
// readers wait for the workers.
var smallBudget int64 = 16 << 20

// entryState digests one entry's inflated contents and checks them against
// the central directory.
type entryState struct {
	e   *zipEntry
	sha stdhash.Hash
	crc uint32
	n   int64
	w   io.WriteCloser
}

func (s *entryState) write(p []byte) error {
	s.n += int64(len(p))
	if s.n > s.e.usize {
		return formatErr("contents longer than the declared size %d", s.e.usize)
	}
	s.sha.Write(p)
	s.crc = crc32.Update(s.crc, crc32.IEEETable, p)
	if s.w != nil {
		if _, err := s.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// abort releases the output of an entry that failed.
func (s *entryState) abort() {
	if s.w != nil {
		s.w.Close()
		s.w = nil
	}
}

func (s *entryState) finish() ([32]byte, error) {
	var sum [32]byte
	if s.w != nil {
		if err := s.w.Close(); err != nil {
			return sum, err
		}
		s.w = nil
	}
	if s.n != s.e.usize {
		return sum, formatErr("contents of %d bytes, declared size %d", s.n, s.e.usize)
	}
	if s.crc != s.e.crc {
		return sum, formatErr("CRC-32 %08x, declared %08x", s.crc, s.e.crc)
	}
	s.sha.Sum(sum[:0])
	return sum, nil
}

// upTo is the size of a buffer for n bytes of data: n, but at least 512
// and at most limit.
func upTo(n int64, limit int) int {
	return int(min(max(n, 512), int64(limit)))
}

// The workers' copy buffers and stream decoders are reused from one
// archive to the next, and the other buffers of the pipeline are sized by
// the archive: hashing many small packages ("providers lock" of other
// platforms' packages, module zips) then allocates, zeroes and collects
// little.
var (
	copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}
	// streamDecoders holds klauspost decoders (flate.Resetter).
	streamDecoders sync.Pool
	wholeDecoders  = sync.Pool{New: func() any { return new(wholeDecoder) }}
)

// hashZip is the one-read pipeline shared by HashZip and Install.
//
// The calling goroutine reads the archive sequentially, feeding every byte to
// the zh digest. A small entry's compressed data is handed whole to a pool of
// workers that inflate and digest it. A large entry is streamed in blocks to
// an inflating goroutine, whose output (chunks, or the part of a mapped output
// file that is final) a third goroutine digests (and writes), so that a
// single large entry also keeps two cores busy. Which decoder inflates an
// entry is decided in inflate.go.
func (o Options) hashZip(ctx context.Context, label string, r io.ReaderAt, size int64, out entryOutput) (ZipSum, error) {
	entries, err := o.readDirectory(r, size)
	if err != nil {
		return ZipSum{}, withPath(err, label)
	}
	nfiles := 0
	for i := range entries {
		if !entries[i].skipped {
			nfiles++
		}
	}
	sums := make([]fileSum, nfiles)

	g, gctx := errgroup.WithContext(ctx)
	type job struct {
		e      *zipEntry
		data   []byte
		weight int64 // taken from budget
	}
	jobs := make(chan job, 2*o.workers())
	budget := semaphore.NewWeighted(smallBudget)
	weight := func(e *zipEntry) int64 { return min(max(e.csize, 1), smallBudget) }
	for range o.workers() {
		g.Go(func() error {
			var buf *[]byte // taken on first use
			var fr io.ReadCloser
			defer func() {
				if buf != nil {
					copyBufs.Put(buf)
				}
				if fr != nil {
					streamDecoders.Put(fr)
				}
			}()
			wd := wholeDecoders.Get().(*wholeDecoder)
			defer wholeDecoders.Put(wd)
			br := new(bytes.Reader)
			for j := range jobs {
				if j.e.method == 8 && j.e.usize >= wholeMin && j.e.usize <= wholeSmall {
					st, err := newEntryState(j.e, out)
					if err != nil {
						return &PackageError{Path: label, Entry: j.e.name, Err: err}
					}
					if err := wd.decode(st, j.data); err != nil {
						st.abort()
						return &PackageError{Path: label, Entry: j.e.name, Err: err}
					}
					if err := finishEntry(st, label, sums); err != nil {
						return err
					}
					budget.Release(j.weight)
					continue
				}
				br.Reset(j.data)
				var src io.Reader = br
				if j.e.method == 8 {
					if fr == nil {
						if d, ok := streamDecoders.Get().(io.ReadCloser); ok {
							fr = d
						} else {
							fr = flate.NewReader(br)
						}
					}
					if err := fr.(flate.Resetter).Reset(br, nil); err != nil {
						return err
					}
					src = fr
				}
				st, err := newEntryState(j.e, out)
				if err != nil {
					return &PackageError{Path: label, Entry: j.e.name, Err: err}
				}
				if buf == nil {
					buf = copyBufs.Get().(*[]byte)
				}
				if err := copyEntry(st, src, *buf); err != nil {
					st.abort()
					return &PackageError{Path: label, Entry: j.e.name, Err: err}
				}
				if err := finishEntry(st, label, sums); err != nil {
					return err
				}
				budget.Release(j.weight)
			}
			return nil
		})
	}

	streams := make(chan struct{}, 2) // large entries in flight, bounding memory
	zh := sha256.New()
	readErr := func() error {
		defer close(jobs)
		br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), upTo(size, 256<<10))
		var pos int64
		read := func(p []byte) error {
			n, err := io.ReadFull(br, p)
			zh.Write(p[:n])
			pos += int64(n)
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return formatErr("unexpected end of archive at byte %d (truncated?)", pos)
			}
			return err
		}
		var scratch []byte // as large as the largest skip so far, up to 64 KiB
		skipTo := func(off int64) error {
			if n := upTo(off-pos, 64<<10); len(scratch) < n {
				scratch = make([]byte, n)
			}
			for pos < off {
				if err := read(scratch[:min(int64(len(scratch)), off-pos)]); err != nil {
					return err
				}
			}
			return nil
		}
		var header [30]byte
		for i := range entries {
			e := &entries[i]
			if e.offset < pos {
				return &PackageError{Path: label, Entry: e.name, Err: formatErr("entry overlaps the previous one")}
			}
			if err := skipTo(e.offset); err != nil {
				return &PackageError{Path: label, Entry: e.name, Err: err}
			}
			if err := read(header[:]); err != nil {
				return &PackageError{Path: label, Entry: e.name, Err: err}
			}
			if binary.LittleEndian.Uint32(header[:]) != sigLocal {
				return &PackageError{Path: label, Entry: e.name, Err: formatErr("bad local file header")}
			}
			nameLen := int64(binary.LittleEndian.Uint16(header[26:]))
			extraLen := int64(binary.LittleEndian.Uint16(header[28:]))
			if binary.LittleEndian.Uint16(header[8:]) != e.method {
				return &PackageError{Path: label, Entry: e.name, Err: formatErr("local header and central directory disagree on the compression method")}
			}
			name := make([]byte, nameLen)
			if err := read(name); err != nil {
				return &PackageError{Path: label, Entry: e.name, Err: err}
			}
			if string(name) != e.name {
				return &PackageError{Path: label, Entry: e.name, Err: formatErr("local header names %q", name)}
			}
			if err := skipTo(pos + extraLen); err != nil {
				return &PackageError{Path: label, Entry: e.name, Err: err}
			}
			if e.csize > size-pos {
				return &PackageError{Path: label, Entry: e.name, Err: formatErr("entry extends past the end of the archive (truncated?)")}
			}
			if out != nil && e.isDir && !(o.Module && IsVCSMetadata(e.path)) {
				if _, err := out(e); err != nil {
					return &PackageError{Path: label, Entry: e.name, Err: err}
				}
			}
			switch {
			case e.skipped:
				if err := skipTo(pos + e.csize); err != nil {
					return &PackageError{Path: label, Entry: e.name, Err: err}
				}
			case e.csize <= smallEntry:
				w := weight(e)
				if err := budget.Acquire(gctx, w); err != nil {
					return nil // canceled, or a worker failed
				}
				data := make([]byte, e.csize)
				if err := read(data); err != nil {
					return &PackageError{Path: label, Entry: e.name, Err: err}
				}
				select {
				case jobs <- job{e, data, w}:
				case <-gctx.Done():
					return nil
				}
			default:
				select {
				case streams <- struct{}{}:
				case <-gctx.Done():
					return nil
				}
				if err := o.streamEntry(gctx, g, label, e, out, read, sums, streams); err != nil {
					return err
				}
			}
			if e.desc {
				// The data descriptor: an optional signature, then the
				// CRC-32, which must agree with the central directory.
				var d [4]byte
				if err := read(d[:]); err != nil {
					return &PackageError{Path: label, Entry: e.name, Err: err}
				}
				if binary.LittleEndian.Uint32(d[:]) == sigDescriptor {
					if err := read(d[:]); err != nil {
						return &PackageError{Path: label, Entry: e.name, Err: err}
					}
				}
				if binary.LittleEndian.Uint32(d[:]) != e.crc {
					return &PackageError{Path: label, Entry: e.name, Err: formatErr("data descriptor and central directory disagree on the CRC-32")}
				}
			}
		}
		return skipTo(size)
	}()
	if readErr != nil {
		g.Go(func() error { return readErr })
	}
	err = g.Wait()
	if readErr != nil {
		err = readErr // the first cause; the other goroutines saw its effects
	}
	if ctx.Err() != nil {
		return ZipSum{}, &PackageError{Path: label, Err: ctx.Err()}
	}
	if err != nil {
		return ZipSum{}, withPath(err, label)
	}
	h1, err := summarize(sums)
	if err != nil {
		return ZipSum{}, &PackageError{Path: label, Err: err}
	}
	var sum [32]byte
	zh.Sum(sum[:0])
	return ZipSum{H1: h1, ZH: NewHash(SchemeZH, sum)}, nil
}

func newEntryState(e *zipEntry, out entryOutput) (*entryState, error) {
	st := &entryState{e: e, sha: sha256.New()}
	if out != nil {
		w, err := out(e)
		if err != nil {
			return nil, err
		}
		st.w = w
	}
	return st, nil
}

// copyEntry reads src to its end into st, stopping early if it is longer
// than declared.
func copyEntry(st *entryState, src io.Reader, buf []byte) error {
	for {
		n, err := src.Read(buf)
		if werr := st.write(buf[:n]); werr != nil {
			return werr
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if err == io.ErrUnexpectedEOF {
				return formatErr("compressed data ends early")
			}
			var ce flate.CorruptInputError
			if errors.As(err, &ce) {
				return formatErr("corrupt compressed data: %v", err)
			}
			return err
		}
	}
}

// streamEntry reads a large entry's compressed data with read and streams
// it to an inflating goroutine and a digesting goroutine started in g. It
// returns once all the data has been read.
func (o Options) streamEntry(ctx context.Context, g *errgroup.Group, label string, e *zipEntry, out entryOutput, read func([]byte) error, sums []fileSum, streams <-chan struct{}) error {
	in := make(chan []byte, blocks)
	inFree := make(chan []byte, blocks)
	inSize := min(blockSize, max(e.csize, 1))
	for range blocks {
		inFree <- make([]byte, inSize)
	}
	st, err := newEntryState(e, out)
	if err != nil {
		<-streams
		return &PackageError{Path: label, Entry: e.name, Err: err}
	}
	switch {
	case e.method == 8 && st.w != nil && e.usize >= mapMin:
		if f, ok := st.w.(*os.File); ok {
			if m, unmap, err := mapOutput(f, e.usize); err == nil {
				st.w = nil // written through the mapping
				cr := &chanReader{ctx: ctx, in: in, free: inFree}
				inflateMapped(ctx, g, label, e, st, sums, f, m, unmap, cr, in, inFree, streams)
				break
			}
		}
		fallthrough
	case e.method == 8:
		cr := &chanReader{ctx: ctx, in: in, free: inFree}
		inflateChunks(ctx, g, label, e, st, sums, cr, in, inFree, streams)
	default:
		streamStored(ctx, g, label, e, st, sums, in, inFree, streams)
	}
	// Feed the compressed data.
	defer close(in)
	for remaining := e.csize; remaining > 0; {
		var b []byte
		select {
		case b = <-inFree:
		case <-ctx.Done():
			return nil
		}
		b = b[:min(int64(len(b)), remaining)]
		if err := read(b); err != nil {
			return &PackageError{Path: label, Entry: e.name, Err: err}
		}
		remaining -= int64(len(b))
		select {
		case in <- b:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// streamStored starts in g the goroutines that copy a streamed stored
// entry in blocks and digest (and write) them into st.
func streamStored(ctx context.Context, g *errgroup.Group, label string, e *zipEntry, st *entryState, sums []fileSum, in chan []byte, inFree chan []byte, streams <-chan struct{}) {
	outCh := make(chan []byte, blocks)
	outFree := make(chan []byte, blocks)
	outSize := min(blockSize, max(e.usize, 1))
	for range blocks {
		outFree <- make([]byte, outSize)
	}
	// Copy.
	g.Go(func() error {
		defer close(outCh)
		cr := &chanReader{ctx: ctx, in: in, free: inFree}
		defer drain(in, inFree)
		src := io.Reader(bufio.NewReaderSize(cr, 64<<10))
		for done := false; !done; {
			var b []byte
			select {
			case b = <-outFree:
			case <-ctx.Done():
				return nil
			}
			n := 0
			for n < len(b) {
				m, err := src.Read(b[n:])
				n += m
				if err == io.EOF {
					done = true
					break
				}
				if err != nil {
					if cr.err != nil {
						return nil // canceled
					}
					if err == io.ErrUnexpectedEOF {
						return &PackageError{Path: label, Entry: e.name, Err: formatErr("compressed data ends early")}
					}
					return &PackageError{Path: label, Entry: e.name, Err: formatErr("corrupt compressed data: %v", err)}
				}
			}
			select {
			case outCh <- b[:n]:
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	})
	// Digest (and write).
	g.Go(func() error {
		defer func() {
			<-streams
			st.abort()
		}()
		for b := range outCh {
			if err := st.write(b); err != nil {
				return &PackageError{Path: label, Entry: e.name, Err: err}
			}
			outFree <- b[:cap(b)]
		}
		if ctx.Err() != nil {
			return nil
		}
		return finishEntry(st, label, sums)
	})
}

// chanReader reads the blocks sent on in, returning each to free once
// consumed.
type chanReader struct {
	ctx  context.Context
	in   <-chan []byte
	free chan<- []byte
	blk  []byte // the block being read, as received
	cur  []byte // its unread part
	err  error
}

func (c *chanReader) Read(p []byte) (int, error) {
	for len(c.cur) == 0 {
		if c.blk != nil {
			c.free <- c.blk[:cap(c.blk)]
			c.blk = nil
		}
		select {
		case b, ok := <-c.in:
			if !ok {
				return 0, io.EOF
			}
			c.blk, c.cur = b, b
		case <-c.ctx.Done():
			c.err = c.ctx.Err()
			return 0, c.err
		}
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

// withPath fills in the archive's name in a *PackageError made without it.
func withPath(err error, label string) error {
	var pe *PackageError
	if errors.As(err, &pe) {
		if pe.Path == "" {
			pe.Path = label
		}
		return err
	}
	return &PackageError{Path: label, Err: err}
}
