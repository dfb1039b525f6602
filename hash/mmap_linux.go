package hash

import (
	"errors"
	"os"
	"syscall"
)

// mapOutput makes f, an empty file opened for reading and writing, size
// bytes long and maps it into memory for writing, for an entry decoded
// straight into its output file. The blocks are allocated first
// (fallocate), so that writing to the mapping cannot fault for want of disk
// space; where they cannot be, mapOutput fails and the caller writes the
// file instead.
func mapOutput(f *os.File, size int64) ([]byte, func() error, error) {
	if size <= 0 || size != int64(int(size)) {
		return nil, nil, errors.New("size cannot be mapped")
	}
	fd := int(f.Fd())
	for {
		err := syscall.Fallocate(fd, 0, 0, size)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		break
	}
	m, err := syscall.Mmap(fd, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Truncate(0)
		return nil, nil, err
	}
	return m, func() error { return syscall.Munmap(m) }, nil
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault pages in,
// writable, without touching their contents.
const madvPopulateWrite = 23

// populate faults in the pages of b, part of a mapping from mapOutput,
// ahead of the decoder, so that the decoder does not stop at a page fault
// for every 4 KiB of output: the goroutine that hashes the output calls it
// on the second core. It reports false if the kernel cannot.
func populate(b []byte) bool {
	for {
		err := syscall.Madvise(b, madvPopulateWrite)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}

// release drops the pages of b, part of a mapping from mapOutput that is
// decoded and hashed, from the process (MADV_DONTNEED), so that a large
// entry does not hold its whole size resident. On a MAP_SHARED file
// mapping the contents are kept: the dirty pages stay in the page cache and
// are written back to the file, and a later access reads them from there
// (madvise(2)). It reports false if the kernel refuses.
func release(b []byte) bool {
	for {
		err := syscall.Madvise(b, syscall.MADV_DONTNEED)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
