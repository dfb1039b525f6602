// Package flate decodes DEFLATE streams (RFC 1951) into an output buffer
// that the caller sizes, in the manner of libdeflate: a 64-bit bit buffer
// refilled eight bytes at a time, table lookups that decode most codes in one
// step (subtables for the rest) with entries that carry the value, the code
// length and the number of extra bits, a fast loop free of per-symbol checks
// while enough input and output remain, word-sized match copies, and a fully
// checked slow path for the tail.
//
// Matches are copied from the output itself, so the output buffer is also
// the window: [Decoder.DecodeAll] decodes a whole stream into a buffer of
// its declared size; [Decoder.Decode] decodes into a buffer whose first
// bytes hold the history (the last 32 KiB of output), for a caller that
// processes the output in chunks.
//
// A stream is accepted exactly when the standard library's compress/flate
// accepts it: the same Huffman codes are valid (complete codes, a single
// code of length 1, an empty distance code), the same limits apply (at most
// 286 literal/length and 30 distance codes, no distance beyond the start of
// the output), and data after the final block is ignored.
package flate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// WindowSize is the largest distance a match may reach back: a caller of
// [Decoder.Decode] keeps this many bytes of history (or all the output, if
// less) before the position it decodes to.
const WindowSize = 32768

// ErrTooLong is returned by [Decoder.DecodeAll] when the stream holds more
// data than the output buffer.
var ErrTooLong = errors.New("flate: data longer than the declared size")

// ErrTooShort is returned by [Decoder.DecodeAll] when the stream ends before
// the output buffer is full.
var ErrTooShort = errors.New("flate: data shorter than the declared size")

// A CorruptInputError reports invalid DEFLATE data.
type CorruptInputError struct {
	Offset int64  // input byte at which the error was found
	Reason string // what is wrong
}

func (e *CorruptInputError) Error() string {
	return fmt.Sprintf("flate: corrupt input at byte %d: %s", e.Offset, e.Reason)
}

const (
	stHeader = iota // at a block header
	stStored        // in a stored block
	stHuff          // in a Huffman-coded block
	stDone          // after the final block
)

const (
	// fastOutMargin is the output room the fast loop needs for one
	// step: the longest match plus the overrun of word-sized copies (or
	// four literals).
	fastOutMargin = 258 + 40
	// fastInMargin is the input the fast loop needs for one step: a
	// refill of the bit buffer.
	fastInMargin = 8
	// inBufSize is the input buffer's size when reading from an
	// io.Reader.
	inBufSize = 256 << 10
	// keepBytes are kept before the read position when the input buffer
	// is refilled: a stored block gives back the whole bytes the bit
	// buffer holds.
	keepBytes = 8
)

// A Decoder decodes one DEFLATE stream at a time. The zero value is not
// ready: call [Decoder.Reset] or [Decoder.ResetBytes] first. A Decoder is
// about 66 KB; reuse it for many streams.
type Decoder struct {
	// Input: in[ip:] is unread; in[0] is input byte base.
	in      []byte
	ip      int
	base    int64
	src     io.Reader
	buf     []byte // backing array of in when reading from src
	eof     bool   // no input after in
	srcErr  error  // the error that ended src, if not io.EOF
	overrun uint   // zero bytes added to the bit buffer past the end of input

	bitbuf   uint64 // next input bits, least significant first
	bitsleft uint   // valid bits in bitbuf (bits above are 0 or the next input bits)

	state      int
	final      bool // the current block is the last
	storedLeft int  // bytes left in the current stored block
	copyLen    int  // bytes left of a match cut short by a full output
	copyDist   int
	err        error // sticky

	tables    *codeTables // the current block's tables
	dynTables codeTables  // a dynamic block's tables
	preTable  [preTableSize]uint32
	lens      [numLitLen + numDist]uint8
}

// Reset makes d decode a new stream read from r.
func (d *Decoder) Reset(r io.Reader) {
	if d.buf == nil {
		d.buf = make([]byte, inBufSize)
	}
	d.reset(d.buf[:0], r)
}

// ResetBytes makes d decode the stream held in b, which it reads but does
// not modify.
func (d *Decoder) ResetBytes(b []byte) {
	d.reset(b, nil)
	d.eof = true
}

func (d *Decoder) reset(in []byte, r io.Reader) {
	d.in, d.ip, d.base, d.src, d.eof, d.srcErr, d.overrun = in, 0, 0, r, false, nil, 0
	d.bitbuf, d.bitsleft = 0, 0
	d.state, d.final, d.storedLeft, d.copyLen, d.copyDist, d.err = stHeader, false, 0, 0, 0, nil
}

// DecodeAll decodes the whole stream into dst, which must be exactly as long
// as the decoded data: a longer stream gives [ErrTooLong], a shorter one
// [ErrTooShort]. If progress is not nil, it is called after every step bytes
// of output (and at the end) with the length of the output that is final:
// dst[:n] will not change, and may be read (by another goroutine) while
// decoding goes on. An error from progress stops decoding and is returned.
func (d *Decoder) DecodeAll(dst []byte, step int, progress func(n int) error) error {
	if step <= 0 || progress == nil {
		step = len(dst)
	}
	pos := 0
	for {
		lim := len(dst)
		if lim-pos > step {
			lim = pos + step
		}
		p, done, err := d.Decode(dst[:lim], pos)
		if err != nil {
			return err
		}
		pos = p
		if progress != nil && (done || pos == lim) {
			if err := progress(pos); err != nil {
				return err
			}
		}
		if done {
			if pos != len(dst) {
				return ErrTooShort
			}
			return nil
		}
		if pos == len(dst) {
			return ErrTooLong
		}
	}
}

// Decode decodes into out[pos:]. The bytes before pos are the output so far
// (at least the last [WindowSize] bytes of it, or all of it if less): a match
// may not reach back further than out[0]. Decode returns the new position
// and done = true at the end of the stream, or done = false when out is full
// and more output follows; a later call goes on from there (typically after
// the caller has moved the last WindowSize bytes to the front of out).
// Bytes of out after the returned position may have been overwritten.
func (d *Decoder) Decode(out []byte, pos int) (n int, done bool, err error) {
	if d.err != nil {
		return pos, false, d.err
	}
	for {
		switch d.state {
		case stDone:
			return pos, true, nil
		case stHeader:
			if d.final {
				d.state = stDone
				continue
			}
			err = d.readHeader()
		case stStored:
			var full bool
			pos, full, err = d.stored(out, pos)
			if full && err == nil {
				return pos, false, nil
			}
		case stHuff:
			var full bool
			pos, full, err = d.huff(out, pos)
			if full && err == nil {
				return pos, false, nil
			}
		}
		if err != nil {
			if d.srcErr != nil && (err == io.ErrUnexpectedEOF) {
				err = d.srcErr
			}
			d.err = err
			return pos, false, err
		}
	}
}

func (d *Decoder) corrupt(reason string) error {
	return &CorruptInputError{Offset: d.base + int64(d.ip) - int64(d.bitsleft/8), Reason: reason}
}

// fill reads more input from src, keeping the last keepBytes bytes before
// the read position.
func (d *Decoder) fill() {
	if d.eof {
		return
	}
	keep := min(d.ip, keepBytes)
	start := d.ip - keep
	n := copy(d.buf, d.in[start:])
	d.base += int64(start)
	d.ip = keep
	d.in = d.buf[:n]
	for {
		m, err := d.src.Read(d.buf[n:])
		n += m
		d.in = d.buf[:n]
		if err != nil {
			d.eof = true
			if err != io.EOF {
				d.srcErr = err
			}
			return
		}
		if m > 0 {
			return
		}
	}
}

// refillSlow fills the bit buffer to 56–63 bits, reading byte by byte and
// adding zero bytes past the end of the input (counted in overrun).
func (d *Decoder) refillSlow() {
	for d.bitsleft <= 55 {
		if d.ip == len(d.in) {
			d.fill()
		}
		if d.ip < len(d.in) {
			d.bitbuf |= uint64(d.in[d.ip]) << d.bitsleft
			d.ip++
		} else {
			d.overrun++
		}
		d.bitsleft += 8
	}
}

// consume drops n bits, reporting whether they were all input (not zero
// bytes added past its end).
func (d *Decoder) consume(n uint) bool {
	d.bitbuf >>= n
	d.bitsleft -= n
	return d.overrun*8 <= d.bitsleft
}

// readHeader reads a block header, and a dynamic block's code lengths.
func (d *Decoder) readHeader() error {
	d.refillSlow()
	h := d.bitbuf & 7
	if !d.consume(3) {
		return io.ErrUnexpectedEOF
	}
	d.final = h&1 != 0
	switch h >> 1 {
	case 0:
		return d.readStoredHeader()
	case 1:
		d.tables = &fixedTables
		d.state = stHuff
		return nil
	case 2:
		return d.readDynamicHeader()
	}
	return d.corrupt("invalid block type")
}

func (d *Decoder) readStoredHeader() error {
	if !d.consume(d.bitsleft & 7) {
		return io.ErrUnexpectedEOF
	}
	// Give back the whole bytes the bit buffer holds.
	d.ip -= int(d.bitsleft/8 - d.overrun)
	d.bitbuf, d.bitsleft, d.overrun = 0, 0, 0
	for len(d.in)-d.ip < 4 && !d.eof {
		d.fill()
	}
	if len(d.in)-d.ip < 4 {
		return io.ErrUnexpectedEOF
	}
	n := binary.LittleEndian.Uint16(d.in[d.ip:])
	nn := binary.LittleEndian.Uint16(d.in[d.ip+2:])
	if n != ^nn {
		return d.corrupt("stored block length does not match its complement")
	}
	d.ip += 4
	d.storedLeft = int(n)
	d.state = stStored
	return nil
}

func (d *Decoder) stored(out []byte, pos int) (int, bool, error) {
	for d.storedLeft > 0 {
		if pos == len(out) {
			return pos, true, nil
		}
		if d.ip == len(d.in) {
			if d.eof {
				return pos, false, io.ErrUnexpectedEOF
			}
			d.fill()
			continue
		}
		n := copy(out[pos:pos+min(d.storedLeft, len(out)-pos)], d.in[d.ip:])
		pos += n
		d.ip += n
		d.storedLeft -= n
	}
	d.state = stHeader
	return pos, false, nil
}

func (d *Decoder) readDynamicHeader() error {
	d.refillSlow()
	nlit := int(d.bitbuf&31) + 257
	ndist := int(d.bitbuf>>5&31) + 1
	npre := int(d.bitbuf>>10&15) + 4
	if !d.consume(14) {
		return io.ErrUnexpectedEOF
	}
	if nlit > numLitLen {
		return d.corrupt("too many literal/length codes")
	}
	if ndist > numDist {
		return d.corrupt("too many distance codes")
	}
	var preLens [numPrecode]uint8
	for i := range npre {
		if d.bitsleft < 3 {
			d.refillSlow()
		}
		preLens[precodeOrder[i]] = uint8(d.bitbuf & 7)
		if !d.consume(3) {
			return io.ErrUnexpectedEOF
		}
	}
	if !buildTable(d.preTable[:], preLens[:], preInfo[:], preTableBits) {
		return d.corrupt("invalid code-length code")
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		d.refillSlow()
		e := d.preTable[d.bitbuf&(preTableSize-1)]
		if e&fValue == 0 {
			return d.corrupt("invalid code-length code")
		}
		if !d.consume(uint(e & 0xff)) {
			return io.ErrUnexpectedEOF
		}
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var v uint8
		switch sym {
		case 16:
			if i == 0 {
				return d.corrupt("repeated code length with no previous length")
			}
			v = lens[i-1]
			rep = 3 + int(d.bitbuf&3)
			if !d.consume(2) {
				return io.ErrUnexpectedEOF
			}
		case 17:
			rep = 3 + int(d.bitbuf&7)
			if !d.consume(3) {
				return io.ErrUnexpectedEOF
			}
		default:
			rep = 11 + int(d.bitbuf&127)
			if !d.consume(7) {
				return io.ErrUnexpectedEOF
			}
		}
		if i+rep > len(lens) {
			return d.corrupt("code lengths repeated past the end")
		}
		for range rep {
			lens[i] = v
			i++
		}
	}
	if !buildTable(d.dynTables[:litTableSize], lens[:nlit], litInfo[:], litTableBits) {
		return d.corrupt("invalid literal/length code")
	}
	if !buildTable(d.dynTables[litTableSize:], lens[nlit:], distInfo[:], distTableBits) {
		return d.corrupt("invalid distance code")
	}
	d.tables = &d.dynTables
	d.state = stHuff
	return nil
}

// huff decodes symbols of a Huffman-coded block into out[pos:] until the
// block ends (state stHeader) or out is full (full = true).
func (d *Decoder) huff(out []byte, pos int) (int, bool, error) {
	if d.copyLen > 0 {
		n := min(d.copyLen, len(out)-pos)
		forwardCopy(out, pos, d.copyDist, n)
		pos += n
		d.copyLen -= n
		if d.copyLen > 0 {
			return pos, true, nil
		}
	}
	lit := (*[litTableSize]uint32)(d.tables[:litTableSize])
	dist := (*[distTableSize]uint32)(d.tables[litTableSize:])
	for {
		if len(d.in)-d.ip < 64 && !d.eof {
			d.fill()
		}
		var eob bool
		var err error
		pos, eob, err = d.fast(out, pos)
		if err != nil {
			return pos, false, err
		}
		if eob {
			d.state = stHeader
			return pos, false, nil
		}

		// The slow path: one symbol, every step checked.
		if len(d.in)-d.ip < 64 && !d.eof {
			d.fill()
			if len(d.in)-d.ip >= fastInMargin && pos <= len(out)-fastOutMargin {
				continue
			}
		}
		d.refillSlow()
		e := lit[d.bitbuf&(1<<litTableBits-1)]
		ebits := uint(0)
		if e&fSub != 0 {
			ebits = litTableBits
			e = lit[(e>>16+uint32(d.bitbuf>>litTableBits)&(1<<(e>>8&15)-1))&(litTableSize-1)]
		}
		if e&fLiteral != 0 {
			if pos == len(out) {
				return pos, true, nil
			}
			if !d.consume(ebits + uint(e&0xff)) {
				return pos, false, io.ErrUnexpectedEOF
			}
			out[pos] = byte(e >> 16)
			pos++
			continue
		}
		if e&fValue == 0 {
			if e&fEOB != 0 {
				if !d.consume(ebits + uint(e&0xff)) {
					return pos, false, io.ErrUnexpectedEOF
				}
				d.state = stHeader
				return pos, false, nil
			}
			if d.overrun*8 > d.bitsleft-ebits-uint(e>>8&15) {
				return pos, false, io.ErrUnexpectedEOF
			}
			return pos, false, d.corrupt("invalid literal/length code")
		}
		d.consume(ebits)
		saved := d.bitbuf
		n := uint(e & 0xff)
		if !d.consume(n) {
			return pos, false, io.ErrUnexpectedEOF
		}
		length := int(e>>16) + int(saved&(1<<n-1)>>(e>>8&15))

		d.refillSlow()
		e = dist[d.bitbuf&(1<<distTableBits-1)]
		ebits = 0
		if e&fSub != 0 {
			ebits = distTableBits
			e = dist[(e>>16+uint32(d.bitbuf>>distTableBits)&(1<<(e>>8&15)-1))&(distTableSize-1)]
		}
		if e&fValue == 0 {
			if d.overrun*8 > d.bitsleft-ebits-uint(e>>8&15) {
				return pos, false, io.ErrUnexpectedEOF
			}
			return pos, false, d.corrupt("invalid distance code")
		}
		d.consume(ebits)
		saved = d.bitbuf
		n = uint(e & 0xff)
		if !d.consume(n) {
			return pos, false, io.ErrUnexpectedEOF
		}
		distance := int(e>>16) + int(saved&(1<<n-1)>>(e>>8&15))
		if distance > pos {
			return pos, false, d.corrupt("distance too far back")
		}
		m := min(length, len(out)-pos)
		forwardCopy(out, pos, distance, m)
		pos += m
		if m < length {
			d.copyLen, d.copyDist = length-m, distance
			return pos, true, nil
		}
	}
}

// Why the fast loop stopped.
const (
	fastLimit   = iota // too little input or output room left
	fastEOB            // the end of the block
	fastBadLit         // an invalid literal/length code
	fastBadDist        // an invalid distance code
	fastFar            // a distance beyond the start of the output
)

// fast decodes symbols while enough input and output remain: input for a
// refill of the bit buffer, output room for the longest match and the
// overrun of word-sized copies. It reports whether it stopped at the end
// of the block.
func (d *Decoder) fast(out []byte, pos int) (int, bool, error) {
	if d.ip > len(d.in)-fastInMargin || pos > len(out)-fastOutMargin {
		return pos, false, nil
	}
	pos, inLeft, bitbuf, bitsleft, status := fastLoop(out, pos, d.in[d.ip:], d.tables, d.bitbuf, uint32(d.bitsleft))
	d.ip, d.bitbuf, d.bitsleft = len(d.in)-inLeft, bitbuf, uint(bitsleft&0xff)
	switch status {
	case fastEOB:
		return pos, true, nil
	case fastBadLit:
		return pos, false, d.corrupt("invalid literal/length code")
	case fastBadDist:
		return pos, false, d.corrupt("invalid distance code")
	case fastFar:
		return pos, false, d.corrupt("distance too far back")
	}
	return pos, false, nil
}

// fastLoop is the loop of fast: it decodes into out[pos:] from in with
// the tables t and the bit buffer (bitbuf, bitsleft), and returns the new
// position, the length of the input left, the bit buffer and why it
// stopped.
//
// The bit buffer is refilled by loading the eight bytes at the start of in
// and adding the whole bytes that fit above the bits left; after a refill
// it holds 64 valid bits of which bitsleft (56 to 63) are counted: the bits
// above are the next input bits, loaded again by the next refill. bitsleft
// has the number of bits in its low 8 bits only: an entry is subtracted
// whole, its low 8 bits being the number of bits it consumes.
func fastLoop(out []byte, pos int, in []byte, t *codeTables, bitbuf uint64, bitsleft uint32) (int, int, uint64, uint32, int) {
	if len(out) < fastOutMargin || len(in) < fastInMargin {
		return pos, len(in), bitbuf, bitsleft, fastLimit
	}
	// Slices of out are checked against its length alone, and slices
	// with both bounds need no check that they are empty.
	out = out[:len(out):len(out)]
	status := fastLimit

	bitbuf |= binary.LittleEndian.Uint64(in) << (bitsleft & 63)
	in = in[7-bitsleft>>3&7:]
	bitsleft |= 56
	e := t[bitbuf&(1<<litTableBits-1)]
	for len(in) >= fastInMargin && pos <= len(out)-fastOutMargin {
		// Loop invariant: bitsleft is 56 or more, and e is the main
		// table's entry for the next bits.
		if e&fLiteral != 0 {
			// Up to four literals (11 bits each at most), each next
			// entry looked up before a literal is stored.
			bitbuf >>= e & 63
			bitsleft -= e
			v := byte(e >> 16)
			e = t[bitbuf&(1<<litTableBits-1)]
			out[pos] = v
			pos++
			if e&fLiteral != 0 {
				bitbuf >>= e & 63
				bitsleft -= e
				v = byte(e >> 16)
				e = t[bitbuf&(1<<litTableBits-1)]
				out[pos] = v
				pos++
				if e&fLiteral != 0 {
					bitbuf >>= e & 63
					bitsleft -= e
					v = byte(e >> 16)
					e = t[bitbuf&(1<<litTableBits-1)]
					out[pos] = v
					pos++
					if e&fLiteral != 0 {
						bitbuf >>= e & 63
						bitsleft -= e
						v = byte(e >> 16)
						e = t[bitbuf&(1<<litTableBits-1)]
						out[pos] = v
						pos++
					}
				}
			}
			// At least 12 bits are left, so e is right for them; a
			// refill only adds bits above.
			bitbuf |= binary.LittleEndian.Uint64(in) << (bitsleft & 63)
			in = in[7-bitsleft>>3&7:]
			bitsleft |= 56
			continue
		}
		saved := bitbuf
		bitbuf >>= e & 63
		bitsleft -= e
		if e&fValue == 0 {
			if e&fSub != 0 {
				// e consumed the main table's bits; the rest of the
				// code indexes its subtable.
				e = t[(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))&(litTableSize-1)]
				saved = bitbuf
				bitbuf >>= e & 63
				bitsleft -= e
				if e&fLiteral != 0 {
					out[pos] = byte(e >> 16)
					pos++
					e = t[bitbuf&(1<<litTableBits-1)]
					bitbuf |= binary.LittleEndian.Uint64(in) << (bitsleft & 63)
					in = in[7-bitsleft>>3&7:]
					bitsleft |= 56
					continue
				}
			}
			if e&fValue == 0 {
				status = fastBadLit
				if e&fEOB != 0 {
					status = fastEOB
				}
				break
			}
		}
		// A length: 20 bits at most with its extra bits, then a
		// distance: 28 bits at most.
		length := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
		e = t[litTableSize+bitbuf&(1<<distTableBits-1)]
		if e&fValue == 0 {
			if e&fSub == 0 {
				status = fastBadDist
				break
			}
			bitbuf >>= distTableBits
			bitsleft -= distTableBits
			e = t[litTableSize+(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))&(distTableSize-1)]
			if e&fValue == 0 {
				status = fastBadDist
				break
			}
		}
		saved = bitbuf
		bitbuf >>= e & 63
		bitsleft -= e
		distance := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
		if distance > pos {
			status = fastFar
			break
		}

		// Look up the next symbol and refill before copying: at least
		// 64-48 valid bits are left.
		e = t[bitbuf&(1<<litTableBits-1)]
		bitbuf |= binary.LittleEndian.Uint64(in) << (bitsleft & 63)
		in = in[7-bitsleft>>3&7:]
		bitsleft |= 56

		src := pos - distance
		end := pos + length
		if distance >= 8 {
			// Five words at once, then word by word: may write up to
			// 39 bytes past end, which the margin allows and later
			// output overwrites.
			from := (*[40]byte)(out[src : src+40])
			to := (*[40]byte)(out[pos : pos+40])
			binary.LittleEndian.PutUint64(to[0:], binary.LittleEndian.Uint64(from[0:]))
			binary.LittleEndian.PutUint64(to[8:], binary.LittleEndian.Uint64(from[8:]))
			binary.LittleEndian.PutUint64(to[16:], binary.LittleEndian.Uint64(from[16:]))
			binary.LittleEndian.PutUint64(to[24:], binary.LittleEndian.Uint64(from[24:]))
			binary.LittleEndian.PutUint64(to[32:], binary.LittleEndian.Uint64(from[32:]))
			for pos += 40; pos < end; pos += 8 {
				binary.LittleEndian.PutUint64(out[pos:pos+8], binary.LittleEndian.Uint64(out[pos-distance:pos-distance+8]))
			}
		} else if distance <= 2 {
			// A repeated byte or pair of bytes: a word of the pattern,
			// stored as for distance 8 or more.
			v := uint64(out[src]) * 0x0101010101010101
			if distance == 2 {
				v = uint64(binary.LittleEndian.Uint16(out[src:src+2])) * 0x0001000100010001
			}
			to := (*[40]byte)(out[pos : pos+40])
			binary.LittleEndian.PutUint64(to[0:], v)
			binary.LittleEndian.PutUint64(to[8:], v)
			binary.LittleEndian.PutUint64(to[16:], v)
			binary.LittleEndian.PutUint64(to[24:], v)
			binary.LittleEndian.PutUint64(to[32:], v)
			for pos += 40; pos < end; pos += 8 {
				binary.LittleEndian.PutUint64(out[pos:pos+8], v)
			}
		} else {
			for ; pos < end; pos++ {
				out[pos] = out[src]
				src++
			}
		}
		pos = end
	}
	return pos, len(in), bitbuf, bitsleft, status
}

// forwardCopy copies n bytes to out[pos:] from distance bytes before,
// byte by byte in order so that an overlapping copy repeats the pattern.
func forwardCopy(out []byte, pos, distance, n int) {
	src := pos - distance
	if distance >= n {
		copy(out[pos:pos+n], out[src:src+n])
		return
	}
	for i := range n {
		out[pos+i] = out[src+i]
	}
}
