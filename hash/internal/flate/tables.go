package flate

// Decode tables.
//
// A table maps the next bits of the input (least significant bit first, as
// DEFLATE packs them) to a 32-bit entry that tells everything needed to
// decode one symbol:
//
//	bits  0–7   how many bits to consume: the codeword's length plus the
//	            number of extra bits that follow it (for a subtable pointer,
//	            the main table's index width)
//	bits  8–11  the codeword's length (for a subtable pointer, the
//	            subtable's index width)
//	bits 12–15  flags: fEOB, fSub, fValue, fLiteral
//	bits 16–31  the value: a literal byte, a length or distance base, a
//	            precode symbol, or a subtable's start index
//
// An entry with none of the flags set is an invalid code: a distance code 30
// or 31, a length code 286 or 287, or a bit pattern an incomplete code
// leaves unused. Codes longer than the main table's index width continue in
// a subtable of 2^(maxLen-tableBits) entries, indexed by the bits after the
// main part.

const (
	fEOB     = 1 << 12 // end of block
	fSub     = 1 << 13 // pointer to a subtable
	fValue   = 1 << 14 // a length, a distance or a precode symbol
	fLiteral = 1 << 15 // a literal byte

	litTableBits  = 11
	distTableBits = 8
	preTableBits  = 7

	maxCodeLen = 15

	// The tables' sizes: powers of two (so that a masked index needs no
	// bounds check) at least as large as the main table plus one full
	// subtable per symbol, a bound on the number of distinct prefixes of
	// long codes: 2048+288*16 = 6656 and 256+32*128 = 4352 entries.
	litTableSize  = 1 << 13
	distTableSize = 1 << 13
	preTableSize  = 1 << preTableBits

	numLitLen  = 286 // largest number of literal/length codes in a dynamic block
	numDist    = 30  // largest number of distance codes in a dynamic block
	numPrecode = 19
)

// The value part of each symbol's entry: its value, flag and number of
// extra bits; the builder adds the codeword length.
var (
	litInfo  [288]uint32
	distInfo [32]uint32
	preInfo  [numPrecode]uint32
)

// precodeOrder is the order in which a dynamic block lists the precode's
// code lengths (RFC 1951, 3.2.7).
var precodeOrder = [numPrecode]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// codeTables holds a block's two tables: the literal/length table, then
// the distance table at index litTableSize, so that one pointer reaches
// both.
type codeTables [litTableSize + distTableSize]uint32

// fixedTables are the tables of the fixed Huffman codes (RFC 1951, 3.2.6).
var fixedTables codeTables

func init() {
	for i := range 256 {
		litInfo[i] = fLiteral | uint32(i)<<16
	}
	litInfo[256] = fEOB
	base, extra := uint32(3), uint32(0)
	for i := 257; i < 285; i++ {
		// Lengths 3–10 have no extra bits; then each group of four codes
		// has one more extra bit than the previous group.
		if i >= 265 {
			extra = uint32(i-261) / 4
		}
		litInfo[i] = fValue | base<<16 | extra
		base += 1 << extra
	}
	litInfo[285] = fValue | 258<<16
	// litInfo[286], litInfo[287] stay invalid.

	base, extra = 1, 0
	for i := range numDist {
		if i >= 4 {
			extra = uint32(i-2) / 2
		}
		distInfo[i] = fValue | base<<16 | extra
		base += 1 << extra
	}
	// distInfo[30], distInfo[31] stay invalid.

	for i := range numPrecode {
		preInfo[i] = fValue | uint32(i)<<16
	}

	litLens, distLens := fixedLengths()
	if !buildTable(fixedTables[:litTableSize], litLens[:], litInfo[:], litTableBits) {
		panic("flate: fixed literal/length code")
	}
	if !buildTable(fixedTables[litTableSize:], distLens[:], distInfo[:], distTableBits) {
		panic("flate: fixed distance code")
	}
}

// fixedLengths returns the code lengths of the fixed Huffman codes.
func fixedLengths() (lit [288]uint8, dist [32]uint8) {
	for i := range lit {
		switch {
		case i < 144:
			lit[i] = 8
		case i < 256:
			lit[i] = 9
		case i < 280:
			lit[i] = 7
		default:
			lit[i] = 8
		}
	}
	for i := range dist {
		dist[i] = 5
	}
	return lit, dist
}

// buildTable fills table for the canonical Huffman code with the given code
// lengths (0: the symbol is unused), using info for each symbol's value. It
// reports whether the code is one compress/flate accepts: complete, or a
// single code of length 1, or empty (no code at all; every lookup then finds
// an invalid entry).
func buildTable(table []uint32, lens []uint8, info []uint32, tableBits uint) bool {
	var count [maxCodeLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	maxLen := uint(0)
	for l := uint(maxCodeLen); l > 0; l-- {
		if count[l] != 0 {
			maxLen = l
			break
		}
	}
	mainSize := 1 << tableBits
	clear(table[:mainSize])
	if maxLen == 0 {
		return true
	}
	// The code space used, in units of 2^-maxLen.
	used := 0
	for l := uint(1); l <= maxLen; l++ {
		used = used<<1 + count[l]
	}
	if used != 1<<maxLen && !(used == 1 && maxLen == 1) {
		return false
	}
	var next [maxCodeLen + 1]uint32
	code := uint32(0)
	for l := 1; l <= maxCodeLen; l++ {
		code = (code + uint32(count[l-1])) << 1
		next[l] = code
	}
	subBits := uint(0)
	if maxLen > tableBits {
		subBits = maxLen - tableBits
	}
	subNext := uint32(mainSize)
	for sym, l8 := range lens {
		if l8 == 0 {
			continue
		}
		l := uint(l8)
		c := next[l]
		next[l]++
		r := reverseBits(c, l)
		if l <= tableBits {
			e := info[sym] + uint32(l)<<8 + uint32(l)
			for i := r; i < uint32(mainSize); i += 1 << l {
				table[i] = e
			}
			continue
		}
		p := r & uint32(mainSize-1)
		if table[p] == 0 {
			table[p] = fSub | subNext<<16 | uint32(subBits)<<8 | uint32(tableBits)
			subNext += 1 << subBits
		}
		start := table[p] >> 16
		sl := l - tableBits
		e := info[sym] + uint32(sl)<<8 + uint32(sl)
		for i := r >> tableBits; i < 1<<subBits; i += 1 << sl {
			table[start+i] = e
		}
	}
	return true
}

// reverseBits returns the low n bits of c in reverse order.
func reverseBits(c uint32, n uint) uint32 {
	var r uint32
	for range n {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}

// The bound above, checked at compile time.
var (
	_ [litTableSize - (1<<litTableBits + 288<<(maxCodeLen-litTableBits))]struct{}
	_ [distTableSize - (1<<distTableBits + 32<<(maxCodeLen-distTableBits))]struct{}
)
