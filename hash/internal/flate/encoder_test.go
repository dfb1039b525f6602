package flate

import "bytes"

// A test-only DEFLATE writer that emits exactly the blocks, codes and
// symbols a test asks for, so that the tests reach cases the real writers
// rarely produce (every length and distance code, 15-bit codes, single-code
// trees, precode symbols 16–18). Its output is checked against
// compress/flate, the reference, in every test that uses it.

type bitWriter struct {
	buf   bytes.Buffer
	acc   uint64
	nbits uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.buf.WriteByte(byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

// code writes a Huffman codeword, most significant bit first.
func (w *bitWriter) code(c uint32, n uint) { w.bits(uint64(reverseBits(c, n)), n) }

func (w *bitWriter) align() {
	if w.nbits > 0 {
		w.bits(0, 8-w.nbits)
	}
}

func (w *bitWriter) bytes() []byte {
	w.align()
	return w.buf.Bytes()
}

// canonical returns the canonical codewords for the code lengths.
func canonical(lens []uint8) []uint32 {
	var count [16]uint32
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]uint32
	code := uint32(0)
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	codes := make([]uint32, len(lens))
	for s, l := range lens {
		if l != 0 {
			codes[s] = next[l]
			next[l]++
		}
	}
	return codes
}

// token is a literal (dist == 0) or a match.
type token struct {
	lit    byte
	length int
	dist   int
}

func lit(b byte) token             { return token{lit: b} }
func match(length, dist int) token { return token{length: length, dist: dist} }

// lengthCode returns the code, extra bits and their count for a length.
func lengthCode(length int) (int, uint64, uint) {
	if length == 258 {
		return 285, 0, 0
	}
	for c := 284; c >= 257; c-- {
		base, n := int(litInfo[c]>>16), uint(litInfo[c]&0xff)
		if length >= base {
			return c, uint64(length - base), n
		}
	}
	panic("bad length")
}

func distCode(dist int) (int, uint64, uint) {
	for c := 29; c >= 0; c-- {
		base, n := int(distInfo[c]>>16), uint(distInfo[c]&0xff)
		if dist >= base {
			return c, uint64(dist - base), n
		}
	}
	panic("bad distance")
}

// fixedLens returns the fixed code's lengths, for the 30 distance codes
// a stream may use.
func fixedLens() (litLens, distLens []uint8) {
	l, d := fixedLengths()
	return l[:], d[:30]
}

// symbols writes tokens and the end-of-block code with the given codes.
func (w *bitWriter) symbols(toks []token, litLens, distLens []uint8) {
	lc, dc := canonical(litLens), canonical(distLens)
	for _, t := range toks {
		if t.dist == 0 {
			w.code(lc[t.lit], uint(litLens[t.lit]))
			continue
		}
		c, x, n := lengthCode(t.length)
		w.code(lc[c], uint(litLens[c]))
		w.bits(x, n)
		c, x, n = distCode(t.dist)
		w.code(dc[c], uint(distLens[c]))
		w.bits(x, n)
	}
	w.code(lc[256], uint(litLens[256]))
}

func (w *bitWriter) fixedBlock(final bool, toks []token) {
	w.bits(b2u(final), 1)
	w.bits(1, 2)
	l, d := fixedLens()
	w.symbols(toks, l, d)
}

func (w *bitWriter) storedBlock(final bool, data []byte) {
	w.bits(b2u(final), 1)
	w.bits(0, 2)
	w.align()
	n := len(data)
	w.bits(uint64(n), 16)
	w.bits(uint64(^n&0xffff), 16)
	w.buf.Write(data)
}

// dynamicBlock writes a dynamic block. The code lengths are sent with the
// precode symbols 16–18 wherever runs allow, unless plain is set. It returns
// how often each precode symbol was used.
func (w *bitWriter) dynamicBlock(final bool, toks []token, litLens, distLens []uint8, plain bool) [19]int {
	freq := w.dynamicHeader(final, litLens, distLens, plain)
	w.symbols(toks, litLens, distLens)
	return freq
}

// dynamicHeader writes a dynamic block's header and code lengths.
func (w *bitWriter) dynamicHeader(final bool, litLens, distLens []uint8, plain bool) [19]int {
	w.bits(b2u(final), 1)
	w.bits(2, 2)
	all := append(append([]uint8{}, litLens...), distLens...)
	// Run-length encode the code lengths into precode symbols.
	type sym struct {
		s     int
		extra uint64
		n     uint
	}
	var syms []sym
	for i := 0; i < len(all); {
		l := all[i]
		run := 1
		for i+run < len(all) && all[i+run] == l {
			run++
		}
		switch {
		case plain || run < 3:
			syms = append(syms, sym{s: int(l)})
			i++
		case l == 0 && run >= 11:
			r := min(run, 138)
			syms = append(syms, sym{18, uint64(r - 11), 7})
			i += r
		case l == 0:
			r := min(run, 10)
			syms = append(syms, sym{17, uint64(r - 3), 3})
			i += r
		default:
			syms = append(syms, sym{s: int(l)})
			i++
			for run--; run >= 3; {
				r := min(run, 6)
				syms = append(syms, sym{16, uint64(r - 3), 2})
				i += r
				run -= r
			}
		}
	}
	var freq [19]int
	for _, s := range syms {
		freq[s.s]++
	}
	preLens := lengthsFor(freq[:], 7)
	npre := 19
	for npre > 4 && preLens[precodeOrder[npre-1]] == 0 {
		npre--
	}
	w.bits(uint64(len(litLens)-257), 5)
	w.bits(uint64(len(distLens)-1), 5)
	w.bits(uint64(npre-4), 4)
	for i := range npre {
		w.bits(uint64(preLens[precodeOrder[i]]), 3)
	}
	pc := canonical(preLens)
	for _, s := range syms {
		w.code(pc[s.s], uint(preLens[s.s]))
		w.bits(s.extra, s.n)
	}
	return freq
}

// lengthsFor returns the lengths of a complete code (at most maxLen bits)
// for the used symbols (freq > 0), not optimal but valid: a single used
// symbol gets length 1.
func lengthsFor(freq []int, maxLen int) []uint8 {
	var used []int
	for s, f := range freq {
		if f > 0 {
			used = append(used, s)
		}
	}
	lens := make([]uint8, len(freq))
	switch len(used) {
	case 0:
		return lens
	case 1:
		lens[used[0]] = 1
		return lens
	}
	// Flat code: 2^k >= n leaves, then shorten the first leaves until the
	// code is complete.
	k := 0
	for 1<<k < len(used) {
		k++
	}
	if k > maxLen {
		panic("too many symbols")
	}
	spare := 1<<k - len(used) // unused leaves at depth k
	for i, s := range used {
		lens[s] = uint8(k)
		if spare > 0 && i < len(used) {
			// Merge this leaf with a spare one: one bit shorter.
			lens[s] = uint8(k - 1)
			spare--
		}
	}
	return lens
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
