package hash

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"slices"
)

// zipEntry is one central-directory record, validated.
type zipEntry struct {
	name    string // as the archive spells it
	path    string // the name cleaned by CleanName: the file's name in the tree and the h1; "" for the root
	offset  int64  // of the local file header
	csize   int64
	usize   int64
	method  uint16
	crc     uint32
	mode    fs.FileMode // type and permission bits, as archive/zip's FileHeader.Mode reads them
	isDir   bool        // a directory: the name ends in "/", or the attributes say so
	desc    bool        // a data descriptor follows the compressed data
	skipped bool        // left out of the hash (directory, or VCS metadata in module mode)
	slot    int         // index of the result, for files that count
}

const (
	sigLocal      = 0x04034b50
	sigCentral    = 0x02014b50
	sigEnd        = 0x06054b50
	sigEnd64      = 0x06064b50
	sigLoc64      = 0x07064b50
	sigDescriptor = 0x08074b50
)

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// ZipTail is how many bytes from the end of a zip archive the readers of
// this package look in for its end of central directory record (22 bytes
// and a comment of at most 65,535). A source that hands over an archive
// still downloading fetches these bytes first, so that reading can start
// before the rest has arrived.
const ZipTail = 22 + 65535

// readDirectory parses and validates the central directory of the zip
// archive of the given size. It returns the entries sorted by offset.
func (o Options) readDirectory(r io.ReaderAt, size int64) ([]zipEntry, error) {
	loc, err := findDirectory(r, size)
	if err != nil {
		return nil, err
	}
	if loc.count > uint64(o.maxFiles()) {
		return nil, fmt.Errorf("%w: %d entries, more than %d", ErrLimit, loc.count, o.maxFiles())
	}
	dir := make([]byte, loc.size)
	if _, err := r.ReadAt(dir, int64(loc.offset)); err != nil {
		return nil, formatErr("reading central directory: %w", err)
	}
	entries, rest, err := o.parseDirectory(dir, loc.count, size)
	if err != nil {
		return nil, err
	}
	// A central directory record right after the declared ones: the
	// archive has more entries than its end record says, which
	// archive/zip (and so OpenTofu) rejects.
	var next [4]byte
	if after := int64(loc.offset+loc.size) - int64(len(rest)); after+4 <= size {
		if _, err := r.ReadAt(next[:], after); err == nil && binary.LittleEndian.Uint32(next[:]) == sigCentral {
			return nil, formatErr("central directory holds more records than the %d declared", loc.count)
		}
	}
	if err := checkEntryNames(entries); err != nil {
		return nil, err
	}
	slot := 0
	for i := range entries {
		if !entries[i].skipped {
			entries[i].slot = slot
			slot++
		}
	}
	slices.SortStableFunc(entries, func(a, b zipEntry) int {
		switch {
		case a.offset < b.offset:
			return -1
		case a.offset > b.offset:
			return 1
		}
		return 0
	})
	return entries, nil
}

// directoryLocation is where the central directory of an archive lies and
// how many records it declares, as its end record (or zip64 end record)
// says.
type directoryLocation struct {
	count, size, offset uint64
}

// findDirectory reads the end of central directory record of the archive
// of the given size (and its zip64 record if it has one) and checks that
// the directory it locates lies inside the archive.
func findDirectory(r io.ReaderAt, size int64) (directoryLocation, error) {
	var loc directoryLocation
	if size < 22 {
		return loc, formatErr("not a zip archive (too short)")
	}
	// Find the end of central directory record, which ends with a comment
	// of at most 65535 bytes. As archive/zip (and so OpenTofu) does, the
	// last signature decides: if its comment would run past the end of the
	// file the archive is refused, even when an earlier signature would
	// fit. archive/zip looks 1,003 bytes further back (65 KiB), so it also
	// takes a record followed by bytes after its comment, which is refused
	// here; the window is ZipTail, the end that the sources fetch first
	// when a large archive is read as it downloads.
	tail := min(size, ZipTail)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return loc, err
	}
	end := -1
	for i := len(buf) - 22; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == sigEnd {
			if i+22+int(binary.LittleEndian.Uint16(buf[i+20:])) > len(buf) {
				return loc, formatErr("not a zip archive (the comment of its end of central directory record runs past the end)")
			}
			end = i
			break
		}
	}
	if end < 0 {
		return loc, formatErr("not a zip archive (no end of central directory record)")
	}
	rec := buf[end:]
	loc.count = uint64(binary.LittleEndian.Uint16(rec[10:]))
	loc.size = uint64(binary.LittleEndian.Uint32(rec[12:]))
	loc.offset = uint64(binary.LittleEndian.Uint32(rec[16:]))
	endOff := size - tail + int64(end)
	if endOff >= 20 && (loc.count == 0xffff || loc.size == 0xffffffff || loc.offset == 0xffffffff) {
		var err error
		if endOff, err = readZip64End(r, size, endOff, &loc); err != nil {
			return loc, err
		}
	}
	if loc.offset > uint64(endOff) || loc.size > uint64(endOff)-loc.offset {
		return loc, formatErr("central directory out of range (truncated archive?)")
	}
	// Each record is at least 46 bytes.
	if loc.count > loc.size/46 {
		return loc, formatErr("central directory declares %d entries in %d bytes", loc.count, loc.size)
	}
	return loc, nil
}

// readZip64End reads the zip64 end of central directory record, if a
// locator precedes the end record at endOff, into loc. It returns the
// offset of the record that ends the directory: the zip64 record's, or
// endOff if there is none.
func readZip64End(r io.ReaderAt, size, endOff int64, loc *directoryLocation) (int64, error) {
	var locator [20]byte
	if _, err := r.ReadAt(locator[:], endOff-20); err != nil {
		return 0, formatErr("reading zip64 locator: %w", err)
	}
	if binary.LittleEndian.Uint32(locator[:]) != sigLoc64 {
		return endOff, nil
	}
	off := binary.LittleEndian.Uint64(locator[8:])
	if off > uint64(size)-56 || size < 56 {
		return 0, formatErr("zip64 record out of range")
	}
	var r64 [56]byte
	if _, err := r.ReadAt(r64[:], int64(off)); err != nil {
		return 0, formatErr("reading zip64 record: %w", err)
	}
	if binary.LittleEndian.Uint32(r64[:]) != sigEnd64 {
		return 0, formatErr("bad zip64 end of central directory record")
	}
	loc.count = binary.LittleEndian.Uint64(r64[32:])
	loc.size = binary.LittleEndian.Uint64(r64[40:])
	loc.offset = binary.LittleEndian.Uint64(r64[48:])
	return int64(off), nil
}

// parseDirectory decodes and checks the count records of the central
// directory dir, of an archive of the given size, against the options'
// limits. It returns the entries in directory order and the bytes of dir
// after the last record.
func (o Options) parseDirectory(dir []byte, count uint64, size int64) ([]zipEntry, []byte, error) {
	entries := make([]zipEntry, 0, count)
	var total int64
	for i := uint64(0); i < count; i++ {
		e, flags, rest, err := parseRecord(dir, i)
		if err != nil {
			return nil, nil, err
		}
		dir = rest
		if err := o.checkEntry(&e, flags, size); err != nil {
			return nil, nil, &PackageError{Entry: e.name, Err: err}
		}
		total += e.usize
		if total > o.maxSize() || total < 0 {
			return nil, nil, &PackageError{Entry: e.name, Err: fmt.Errorf("%w: total uncompressed size above %d bytes", ErrLimit, o.maxSize())}
		}
		e.skipped = e.isDir || o.Module && IsVCSMetadata(e.path)
		entries = append(entries, e)
	}
	return entries, dir, nil
}

// parseRecord decodes central directory record i at the start of dir:
// its entry (name, sizes, offset, method, CRC-32 and mode), its general
// purpose flags, and the bytes after it.
func parseRecord(dir []byte, i uint64) (zipEntry, uint16, []byte, error) {
	if len(dir) < 46 || binary.LittleEndian.Uint32(dir) != sigCentral {
		return zipEntry{}, 0, nil, formatErr("bad central directory record %d", i)
	}
	madeBy := binary.LittleEndian.Uint16(dir[4:])
	flags := binary.LittleEndian.Uint16(dir[8:])
	e := zipEntry{
		method: binary.LittleEndian.Uint16(dir[10:]),
		crc:    binary.LittleEndian.Uint32(dir[16:]),
		csize:  int64(binary.LittleEndian.Uint32(dir[20:])),
		usize:  int64(binary.LittleEndian.Uint32(dir[24:])),
		offset: int64(binary.LittleEndian.Uint32(dir[42:])),
	}
	nameLen := int(binary.LittleEndian.Uint16(dir[28:]))
	extraLen := int(binary.LittleEndian.Uint16(dir[30:]))
	commentLen := int(binary.LittleEndian.Uint16(dir[32:]))
	attrs := binary.LittleEndian.Uint32(dir[38:])
	if len(dir) < 46+nameLen+extraLen+commentLen {
		return zipEntry{}, 0, nil, formatErr("bad central directory record %d", i)
	}
	e.name = string(dir[46 : 46+nameLen])
	extra := dir[46+nameLen : 46+nameLen+extraLen]
	rest := dir[46+nameLen+extraLen+commentLen:]
	if err := e.readZip64Extra(extra); err != nil {
		return zipEntry{}, 0, nil, &PackageError{Entry: e.name, Err: err}
	}
	// The type and permission bits as archive/zip reads them (and so
	// OpenTofu, which extracts with it): Unix modes for the Unix and
	// Mac OS X creators, MS-DOS attributes for FAT, NTFS and VFAT, and a
	// directory for a name ending in "/" whatever the creator. One rule,
	// so that the tree installed here is the tree archive/zip installs.
	e.mode = (&zip.FileHeader{Name: e.name, CreatorVersion: madeBy, ExternalAttrs: attrs}).Mode()
	e.isDir = e.mode.IsDir()
	if !e.isDir && e.mode&fs.ModeSymlink != 0 {
		// A symbolic link is installed as OpenTofu's extraction
		// (go-getter's, on archive/zip) installs it: a regular file
		// holding the link's target, with the link's permission bits.
		// So the h1 is that of tofu's tree, and no link is created.
		e.mode &^= fs.ModeSymlink
	}
	e.desc = flags&8 != 0
	return e, flags, rest, nil
}

// readZip64Extra reads the zip64 extended information of a record's extra
// field: the 64-bit values of the fields set to 0xffffffff, in the order
// usize, csize, offset.
func (e *zipEntry) readZip64Extra(extra []byte) error {
	for len(extra) >= 4 {
		tag := binary.LittleEndian.Uint16(extra)
		n := int(binary.LittleEndian.Uint16(extra[2:]))
		if len(extra) < 4+n {
			break
		}
		field := extra[4 : 4+n]
		extra = extra[4+n:]
		if tag != 0x0001 {
			continue
		}
		for _, p := range []*int64{&e.usize, &e.csize, &e.offset} {
			if *p != 0xffffffff {
				continue
			}
			if len(field) < 8 {
				return formatErr("bad zip64 extra field")
			}
			v := binary.LittleEndian.Uint64(field)
			if v > 1<<62 {
				return formatErr("size out of range")
			}
			*p = int64(v)
			field = field[8:]
		}
	}
	return nil
}

// checkEntry cleans the entry's name into e.path and refuses an entry
// this package does not install: an unsafe name, an encrypted entry, an
// unknown compression method or file type, inconsistent sizes, a
// compression ratio above the limit, or data outside the archive of the
// given size.
func (o Options) checkEntry(e *zipEntry, flags uint16, size int64) error {
	var err error
	if e.path, err = CleanName(e.name); err != nil {
		return err
	}
	if e.path == "" && !e.isDir {
		return fmt.Errorf("%w: a file named as the package root", ErrUnsafePath)
	}
	switch {
	case e.isDir:
		// A directory's data, if any, is never read (as archive/zip's
		// users do not open a directory): it is installed empty and
		// left out of the h1:, its bytes counted in the zh: only.
	case flags&1 != 0:
		return fmt.Errorf("%w: encrypted entry", ErrUnsupported)
	case e.method != 0 && e.method != 8:
		return fmt.Errorf("%w: compression method %d", ErrUnsupported, e.method)
	case e.mode.Type() != 0:
		return fmt.Errorf("%w: file type %v", ErrUnsupported, e.mode.Type())
	case e.method == 0 && e.csize != e.usize:
		return formatErr("stored entry with compressed size %d and size %d", e.csize, e.usize)
	case e.usize > ratioFloor && e.usize/max(e.csize, 1) > o.maxRatio():
		return fmt.Errorf("%w: compression ratio %d:1 above %d:1", ErrLimit, e.usize/max(e.csize, 1), o.maxRatio())
	}
	if e.offset > size || e.csize > size-e.offset {
		return formatErr("entry extends past the end of the archive (truncated?)")
	}
	return nil
}

// checkEntryNames refuses two entries of one name, and a file whose name
// is a directory of another entry (the root, which the destination is,
// aside).
func checkEntryNames(entries []zipEntry) error {
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.path != "" {
			names = append(names, e.path)
		}
	}
	slices.Sort(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return &PackageError{Entry: names[i], Err: ErrDuplicate}
		}
	}
	files := make(map[string]bool)
	for _, e := range entries {
		if !e.isDir {
			files[e.path] = true
		}
	}
	for _, e := range entries {
		n := e.path
		for i := len(n) - 1; i > 0; i-- {
			if n[i] == '/' && files[n[:i]] {
				return &PackageError{Entry: n[:i], Err: fmt.Errorf("%w: used as a file and as a directory", ErrDuplicate)}
			}
		}
	}
	return nil
}
