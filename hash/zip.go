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
	g, gctx := errgroup.WithContext(ctx)
	p := &zipPipeline{
		o:       o,
		label:   label,
		out:     out,
		sums:    make([]fileSum, nfiles),
		g:       g,
		ctx:     gctx,
		jobs:    make(chan zipJob, 2*o.workers()),
		budget:  semaphore.NewWeighted(smallBudget),
		streams: make(chan struct{}, 2), // large entries in flight, bounding memory
	}
	for range o.workers() {
		g.Go(p.work)
	}
	s := &p.scan
	s.br = bufio.NewReaderSize(io.NewSectionReader(r, 0, size), upTo(size, 256<<10))
	s.zh = sha256.New()
	readErr := p.readEntries(s, entries, size)
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
	h1, err := summarize(p.sums)
	if err != nil {
		return ZipSum{}, &PackageError{Path: label, Err: err}
	}
	var sum [32]byte
	s.zh.Sum(sum[:0])
	return ZipSum{H1: h1, ZH: NewHash(SchemeZH, sum)}, nil
}

// zipPipeline is the state hashZip shares between the reading goroutine,
// the workers that digest small entries and the goroutines that stream
// large ones.
type zipPipeline struct {
	o       Options
	label   string
	out     entryOutput
	sums    []fileSum // by entry slot
	g       *errgroup.Group
	ctx     context.Context // canceled when a goroutine of g fails
	jobs    chan zipJob     // small entries, to the workers
	budget  *semaphore.Weighted
	streams chan struct{} // large entries in flight
	scan    zipScanner    // the reading goroutine's
}

// zipJob is a small entry's compressed data, handed to a worker whole.
type zipJob struct {
	e      *zipEntry
	data   []byte
	weight int64 // taken from budget
}

// entryErr is err about entry e of the archive.
func (p *zipPipeline) entryErr(e *zipEntry, err error) error {
	return &PackageError{Path: p.label, Entry: e.name, Err: err}
}

// work is a worker: it inflates and digests (and writes) the small
// entries of jobs until the reader closes it.
func (p *zipPipeline) work() error {
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
	for j := range p.jobs {
		if j.e.method == 8 && j.e.usize >= wholeMin && j.e.usize <= wholeSmall {
			st, err := newEntryState(j.e, p.out)
			if err != nil {
				return p.entryErr(j.e, err)
			}
			if err := wd.decode(st, j.data); err != nil {
				st.abort()
				return p.entryErr(j.e, err)
			}
			if err := finishEntry(st, p.label, p.sums); err != nil {
				return err
			}
			p.budget.Release(j.weight)
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
		st, err := newEntryState(j.e, p.out)
		if err != nil {
			return p.entryErr(j.e, err)
		}
		if buf == nil {
			buf = copyBufs.Get().(*[]byte)
		}
		if err := copyEntry(st, src, *buf); err != nil {
			st.abort()
			return p.entryErr(j.e, err)
		}
		if err := finishEntry(st, p.label, p.sums); err != nil {
			return err
		}
		p.budget.Release(j.weight)
	}
	return nil
}

// zipScanner reads an archive from its start to its end, feeding every
// byte to the zh digest.
type zipScanner struct {
	br      *bufio.Reader
	zh      stdhash.Hash
	pos     int64
	scratch []byte   // as large as the largest skip so far, up to 64 KiB
	header  [30]byte // a local file header; here so that reading one allocates nothing
	desc    [4]byte  // a word of a data descriptor, likewise
}

// read fills p with the next bytes of the archive.
func (s *zipScanner) read(p []byte) error {
	n, err := io.ReadFull(s.br, p)
	s.zh.Write(p[:n])
	s.pos += int64(n)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return formatErr("unexpected end of archive at byte %d (truncated?)", s.pos)
	}
	return err
}

// skipTo reads (and digests) the archive up to offset off.
func (s *zipScanner) skipTo(off int64) error {
	if n := upTo(off-s.pos, 64<<10); len(s.scratch) < n {
		s.scratch = make([]byte, n)
	}
	for s.pos < off {
		if err := s.read(s.scratch[:min(int64(len(s.scratch)), off-s.pos)]); err != nil {
			return err
		}
	}
	return nil
}

// readEntries reads the archive of the given size with s, entry after
// entry in the order of their offsets, and hands each entry's data to the
// workers or to a stream. It closes jobs when it returns. A nil error
// with the pipeline's context canceled means that another goroutine
// failed.
func (p *zipPipeline) readEntries(s *zipScanner, entries []zipEntry, size int64) error {
	defer close(p.jobs)
	for i := range entries {
		e := &entries[i]
		if e.offset < s.pos {
			return p.entryErr(e, formatErr("entry overlaps the previous one"))
		}
		if err := s.skipTo(e.offset); err != nil {
			return p.entryErr(e, err)
		}
		if err := p.readLocalHeader(s, e, size); err != nil {
			return err
		}
		stop, err := p.readData(s, e)
		if err != nil || stop {
			return err
		}
		if e.desc {
			if err := p.readDescriptor(s, e); err != nil {
				return err
			}
		}
	}
	return s.skipTo(size)
}

// readLocalHeader reads entry e's local file header, checks it against
// the central directory, and creates the entry if it is a directory that
// is installed.
func (p *zipPipeline) readLocalHeader(s *zipScanner, e *zipEntry, size int64) error {
	header := s.header[:]
	if err := s.read(header); err != nil {
		return p.entryErr(e, err)
	}
	if binary.LittleEndian.Uint32(header) != sigLocal {
		return p.entryErr(e, formatErr("bad local file header"))
	}
	nameLen := int64(binary.LittleEndian.Uint16(header[26:]))
	extraLen := int64(binary.LittleEndian.Uint16(header[28:]))
	if binary.LittleEndian.Uint16(header[8:]) != e.method {
		return p.entryErr(e, formatErr("local header and central directory disagree on the compression method"))
	}
	name := make([]byte, nameLen)
	if err := s.read(name); err != nil {
		return p.entryErr(e, err)
	}
	if string(name) != e.name {
		return p.entryErr(e, formatErr("local header names %q", name))
	}
	if err := s.skipTo(s.pos + extraLen); err != nil {
		return p.entryErr(e, err)
	}
	if e.csize > size-s.pos {
		return p.entryErr(e, formatErr("entry extends past the end of the archive (truncated?)"))
	}
	if p.out != nil && e.isDir && !(p.o.Module && IsVCSMetadata(e.path)) {
		if _, err := p.out(e); err != nil {
			return p.entryErr(e, err)
		}
	}
	return nil
}

// readData reads entry e's compressed data: skipped, handed whole to a
// worker, or streamed. stop reports that the pipeline was canceled.
func (p *zipPipeline) readData(s *zipScanner, e *zipEntry) (stop bool, err error) {
	switch {
	case e.skipped:
		if err := s.skipTo(s.pos + e.csize); err != nil {
			return false, p.entryErr(e, err)
		}
	case e.csize <= smallEntry:
		w := min(max(e.csize, 1), smallBudget)
		if err := p.budget.Acquire(p.ctx, w); err != nil {
			return true, nil // canceled, or a worker failed
		}
		data := make([]byte, e.csize)
		if err := s.read(data); err != nil {
			return false, p.entryErr(e, err)
		}
		select {
		case p.jobs <- zipJob{e, data, w}:
		case <-p.ctx.Done():
			return true, nil
		}
	default:
		select {
		case p.streams <- struct{}{}:
		case <-p.ctx.Done():
			return true, nil
		}
		if err := p.o.streamEntry(p.ctx, p.g, p.label, e, p.out, s.read, p.sums, p.streams); err != nil {
			return false, err
		}
	}
	return false, nil
}

// readDescriptor reads the data descriptor after entry e's data: an
// optional signature, then the CRC-32, which must agree with the central
// directory.
func (p *zipPipeline) readDescriptor(s *zipScanner, e *zipEntry) error {
	d := s.desc[:]
	if err := s.read(d); err != nil {
		return p.entryErr(e, err)
	}
	if binary.LittleEndian.Uint32(d) == sigDescriptor {
		if err := s.read(d); err != nil {
			return p.entryErr(e, err)
		}
	}
	if binary.LittleEndian.Uint32(d) != e.crc {
		return p.entryErr(e, formatErr("data descriptor and central directory disagree on the CRC-32"))
	}
	return nil
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
