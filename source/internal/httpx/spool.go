package httpx

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// MemoryMax is the largest download a memory [Spool] keeps in memory: a
// response that announces (Content-Length) at most this many bytes. A
// larger one, or one of unknown size, goes to a file, as does any when
// [MemoryBudget] is spent.
const MemoryMax = 2 << 20

// MemoryBudget bounds the bytes that all the memory spools of the process
// hold at once (reserved when a response's size is known, given back by
// [Spool.Release]): 32 downloads or more at once hold no more than this in
// memory; the others go to files.
const MemoryBudget = 32 << 20

// budget is the process's reserve of MemoryBudget bytes.
var budget = &memBudget{left: MemoryBudget}

type memBudget struct {
	mu   sync.Mutex
	left int64
}

// take reserves n bytes if they are left.
func (b *memBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

// give returns n bytes taken.
func (b *memBudget) give(n int64) {
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
}

// A Spool is where a download ([Client.Download], [Client.StartDownload])
// writes what it receives: a file, or, for a memory spool
// ([MemorySpool]), memory when the response announces a small size
// ([MemoryMax]) that the process's [MemoryBudget] grants, else a file
// made when first needed. Each attempt of the download decides anew,
// once its response's headers are in.
type Spool struct {
	create func() (*os.File, error) // makes the file; nil for a file spool
	f      *os.File
	buf    bytes.Buffer
	inMem  bool // the current attempt writes to buf
	// fileOnly: the download is read as it arrives ([Client.StartDownload]
	// with a tail), from the file.
	fileOnly bool
	held     int64 // bytes of budget reserved
}

// FileSpool is the spool of the file f.
func FileSpool(f *os.File) *Spool { return &Spool{f: f} }

// MemorySpool is a spool that keeps a small download in memory, else
// writes it into the file create makes (called at most once).
func MemorySpool(create func() (*os.File, error)) *Spool { return &Spool{create: create} }

// begin starts an attempt whose response announces size bytes (-1:
// unknown): it decides where the attempt's bytes go.
func (s *Spool) begin(size int64) error {
	if s.create != nil && !s.fileOnly && size >= 0 && size <= MemoryMax && (size <= s.held || budget.take(size-s.held)) {
		s.held = max(s.held, size)
		s.inMem = true
		s.buf.Grow(int(size))
		return nil
	}
	s.inMem = false
	return s.makeFile()
}

// makeFile makes the spool's file if it has none yet.
func (s *Spool) makeFile() error {
	if s.f != nil {
		return nil
	}
	f, err := s.create()
	if err != nil {
		return err
	}
	s.f = f
	return nil
}

// rewind empties the spool before an attempt.
func (s *Spool) rewind() error {
	s.buf.Reset()
	if s.f == nil {
		return nil
	}
	// An empty file (the first attempt's, usually) is not truncated:
	// on ext4, a file truncated to nothing has its delayed blocks
	// allocated and flushed when it is closed (the "auto_da_alloc"
	// safeguard for files replaced by truncation), which for a large
	// package cost 70–180 ms at its close, and as much again at its
	// removal, which waits for that writeback.
	if info, err := s.f.Stat(); err != nil {
		return err
	} else if info.Size() > 0 {
		if err := s.f.Truncate(0); err != nil {
			return err
		}
	}
	_, err := s.f.Seek(0, io.SeekStart)
	return err
}

// Write writes to the current attempt's destination.
func (s *Spool) Write(p []byte) (int, error) {
	if s.inMem {
		return s.buf.Write(p)
	}
	return s.f.Write(p)
}

// Data is the download, when its last attempt went to memory; nil when
// it went to the file.
func (s *Spool) Data() []byte {
	if !s.inMem {
		return nil
	}
	if s.buf.Len() == 0 {
		return []byte{}
	}
	return s.buf.Bytes()
}

// File is the spool's file: nil when none was needed.
func (s *Spool) File() *os.File { return s.f }

// Release gives back the memory the spool holds (its budget too): the
// caller calls it once done with Data.
func (s *Spool) Release() {
	if s.held > 0 {
		budget.give(s.held)
		s.held = 0
	}
	s.buf = bytes.Buffer{}
	s.inMem = false
}
