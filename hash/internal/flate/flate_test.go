package flate

import (
	"bytes"
	stdflate "compress/flate"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	kflate "github.com/klauspost/compress/flate"

	"github.com/tflock/tflock/internal/longtest"
)

// The reference is compress/flate: every stream is decoded by it, by
// klauspost/compress/flate when the reference accepts it, and by this
// package in every way it can be used (whole buffer; chunks through a small
// window from an io.Reader handing out a few bytes at a time); the verdicts
// and the outputs must agree.

func stdDecode(data []byte) ([]byte, error) {
	return io.ReadAll(stdflate.NewReader(bytes.NewReader(data)))
}

func kDecode(data []byte) ([]byte, error) {
	return io.ReadAll(kflate.NewReader(bytes.NewReader(data)))
}

// decodeAll decodes data whole into a buffer of size bytes.
func decodeAll(data []byte, size int) ([]byte, error) {
	var d Decoder
	d.ResetBytes(data)
	out := make([]byte, size)
	err := d.DecodeAll(out, 0, nil)
	return out, err
}

// decodeChunks decodes data read from r in chunks of chunk bytes after a
// window, as a caller that only hashes the output does; it gives up with
// ErrTooLong after limit bytes.
func decodeChunks(r io.Reader, chunk, limit int) ([]byte, error) {
	var d Decoder
	d.Reset(r)
	buf := make([]byte, WindowSize+chunk)
	var got []byte
	pos := 0
	for {
		start := pos
		p, done, err := d.Decode(buf, pos)
		got = append(got, buf[start:p]...)
		if err != nil {
			return got, err
		}
		if done {
			return got, nil
		}
		if len(got) > limit {
			return got, ErrTooLong
		}
		h := min(p, WindowSize)
		copy(buf, buf[p-h:p])
		pos = h
	}
}

// check compares the decoders on one stream and returns the reference's
// output and verdict.
func check(t *testing.T, name string, data []byte) ([]byte, error) {
	t.Helper()
	return checkMode(t, name, data, false)
}

// checkMode is check; light tries one way of reading in chunks instead of
// all, for tests that check very many streams.
func checkMode(t *testing.T, name string, data []byte, light bool) ([]byte, error) {
	t.Helper()
	want, wantErr := stdDecode(data)
	if wantErr == nil {
		k, err := kDecode(data)
		if err != nil || !bytes.Equal(k, want) {
			t.Fatalf("%s: klauspost disagrees with compress/flate: %v", name, err)
		}
		got, err := decodeAll(data, len(want))
		if err != nil {
			t.Fatalf("%s: DecodeAll: %v (compress/flate accepts)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: DecodeAll: output differs from compress/flate's at byte %d", name, firstDiff(got, want))
		}
		if len(want) > 0 {
			if _, err := decodeAll(data, len(want)-1); !errors.Is(err, ErrTooLong) {
				t.Fatalf("%s: declared size one too small: %v, want ErrTooLong", name, err)
			}
		}
		if _, err := decodeAll(data, len(want)+1); !errors.Is(err, ErrTooShort) {
			t.Fatalf("%s: declared size one too large: %v, want ErrTooShort", name, err)
		}
	} else {
		// No declared size makes a rejected stream acceptable: neither
		// the length the reference got to, nor a generous one.
		if _, err := decodeAll(data, len(want)); err == nil {
			t.Fatalf("%s: DecodeAll accepts a stream compress/flate rejects (%v)", name, wantErr)
		}
	}
	for _, chunk := range []int{1, 300, 4000, 64 << 10} {
		for _, r := range []struct {
			name string
			r    io.Reader
		}{
			{"whole", bytes.NewReader(data)},
			{"one-byte", iotest.OneByteReader(bytes.NewReader(data))},
			{"half", iotest.HalfReader(bytes.NewReader(data))},
		} {
			if light && (chunk != 300 || r.name != "half") ||
				(chunk == 1 || r.name == "one-byte") && len(data) > 4<<10 ||
				chunk == 300 && len(want) > 100<<10 {
				continue // one way in light mode; small steps only for small streams
			}
			got, err := decodeChunks(r.r, chunk, len(want)+1<<20)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%s: chunks of %d, %s reader: error %v; compress/flate: %v", name, chunk, r.name, err, wantErr)
			}
			if err == nil && !bytes.Equal(got, want) {
				t.Fatalf("%s: chunks of %d, %s reader: output differs at byte %d", name, chunk, r.name, firstDiff(got, want))
			}
			// What a rejected stream decodes to before the error agrees
			// with what the reference decoded.
			if n := min(len(got), len(want)); err != nil && !bytes.Equal(got[:n], want[:n]) {
				t.Fatalf("%s: chunks of %d, %s reader: output before the error differs at byte %d", name, chunk, r.name, firstDiff(got, want))
			}
		}
	}
	return want, wantErr
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// mustAccept checks a hand-made stream that the reference must accept
// with output want.
func mustAccept(t *testing.T, name string, data, want []byte) {
	t.Helper()
	got, err := check(t, name, data)
	if err != nil {
		t.Fatalf("%s: compress/flate rejects the test's stream: %v", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: compress/flate decodes the test's stream differently than meant", name)
	}
}

func mustReject(t *testing.T, name string, data []byte) {
	t.Helper()
	if _, err := check(t, name, data); err == nil {
		t.Fatalf("%s: compress/flate accepts the test's invalid stream", name)
	}
}

// testInputs are deterministic inputs of different kinds.
func testInputs(t *testing.T) map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 100<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	text, err := os.ReadFile(filepath.Join("testdata", "stdlib", "e.txt"))
	if err != nil {
		t.Fatal(err)
	}
	getty, err := os.ReadFile(filepath.Join("testdata", "stdlib", "gettysburg.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Binary-like: random runs, repeated strings, zero runs.
	var bin bytes.Buffer
	for bin.Len() < 150<<10 {
		switch rng.IntN(3) {
		case 0:
			n := rng.IntN(200)
			for range n {
				bin.WriteByte(byte(rng.Uint32()))
			}
		case 1:
			s := getty[rng.IntN(len(getty)-100):]
			bin.Write(s[:3+rng.IntN(90)])
		default:
			bin.Write(make([]byte, rng.IntN(600)))
		}
	}
	return map[string][]byte{
		"empty":  nil,
		"one":    {'x'},
		"zeros":  make([]byte, 100<<10),
		"random": random,
		"text":   text,
		"getty":  getty,
		"binary": bin.Bytes(),
	}
}

func TestStdlibTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "stdlib", "*"))
	if err != nil || len(files) < 30 {
		t.Fatal(files, err)
	}
	streams := 0
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Each file as a stream, and each file compressed. The .golden
		// and .expect files are DEFLATE blocks without a final block:
		// rejected at their end, after the whole of their .in file.
		want, _ := check(t, filepath.Base(f), data)
		if ext := filepath.Ext(f); ext == ".golden" || ext == ".expect" {
			in, err := os.ReadFile(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(f, ext), ".wb"), ".dyn") + ".in")
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeChunks(bytes.NewReader(data), 1000, len(in))
			if !bytes.Equal(got, in) || !bytes.Equal(want, in) || err != io.ErrUnexpectedEOF {
				t.Fatalf("%s: decoded %d bytes (%v), compress/flate %d, want the %d of the .in file", f, len(got), err, len(want), len(in))
			}
			streams++
		}
		// Compressed at every level with TFLOCK_LONG_TESTS=1; by
		// default at one, a different one for each file in turn.
		for k, level := range []int{stdflate.HuffmanOnly, 1, 6, 9} {
			if longtest.Enabled() || k == i%4 {
				check(t, fmt.Sprintf("%s@%d", filepath.Base(f), level), compressStd(t, data, level))
			}
		}
	}
	if streams < 20 {
		t.Fatalf("only %d DEFLATE files in the stdlib's test data", streams)
	}
}

func compressStd(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := stdflate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func compressK(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := kflate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// TestWritersEveryLevel checks the streams of both writers at every
// level on every input. By default it checks a sample of the pairs of an
// input and a level in which every input and every level appear; with
// TFLOCK_LONG_TESTS=1, all of them.
func TestWritersEveryLevel(t *testing.T) {
	inputs := testInputs(t)
	for j, name := range slices.Sorted(maps.Keys(inputs)) {
		in := inputs[name]
		for level := -2; level <= 9; level++ {
			if level == -1 {
				continue // the default, 6
			}
			if !longtest.Enabled() && (level+j)%6 != 0 {
				continue
			}
			check(t, fmt.Sprintf("%s std@%d", name, level), compressStd(t, in, level))
			check(t, fmt.Sprintf("%s klauspost@%d", name, level), compressK(t, in, level))
		}
		// A klauspost stream with sync flushes: empty stored blocks
		// between the others.
		var buf bytes.Buffer
		w, _ := kflate.NewWriter(&buf, 5)
		for i := 0; i < len(in); i += 10000 {
			w.Write(in[i:min(i+10000, len(in))])
			w.Flush()
		}
		w.Close()
		check(t, name+" flushed", buf.Bytes())
	}
}

func TestStoredBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 9, 1000, 65534, 65535} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		var w bitWriter
		w.storedBlock(true, data)
		mustAccept(t, fmt.Sprintf("stored %d", n), w.bytes(), data)

		// Stored after bits of a fixed block, so that the alignment
		// drops bits; then a fixed block after the stored one.
		w = bitWriter{}
		w.fixedBlock(false, []token{lit('a')})
		w.storedBlock(false, data)
		w.fixedBlock(true, []token{lit('b')})
		want := append(append([]byte{'a'}, data...), 'b')
		mustAccept(t, fmt.Sprintf("fixed+stored %d+fixed", n), w.bytes(), want)
	}
	// Every alignment of a stored block's header.
	for k := range 8 {
		var w bitWriter
		toks := make([]token, k)
		want := make([]byte, k)
		for i := range toks {
			toks[i] = lit(byte('0' + i))
			want[i] = byte('0' + i)
		}
		w.fixedBlock(false, toks)
		w.storedBlock(true, []byte("stored"))
		mustAccept(t, fmt.Sprintf("stored after %d literals", k), w.bytes(), append(want, "stored"...))
	}
	// LEN and NLEN that disagree.
	var w bitWriter
	w.storedBlock(true, []byte("abc"))
	b := w.bytes()
	b[3] ^= 1
	mustReject(t, "stored NLEN", b)
}

// history returns n bytes of varied content.
func history(n int) []byte {
	rng := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// expand applies tokens to history, as a decoder does.
func expand(hist []byte, toks []token) []byte {
	out := append([]byte{}, hist...)
	for _, t := range toks {
		if t.dist == 0 {
			out = append(out, t.lit)
			continue
		}
		for range t.length {
			out = append(out, out[len(out)-t.dist])
		}
	}
	return out
}

// TestEveryLengthAndDistance uses every length code and every distance
// code with their smallest and largest extra bits, in fixed and dynamic
// blocks, after a stored block of 40,000 bytes of history.
func TestEveryLengthAndDistance(t *testing.T) {
	hist := history(40000)
	var lengths, dists []int
	for c := 257; c <= 285; c++ {
		base, n := int(litInfo[c]>>16), uint(litInfo[c]&0xff)
		lengths = append(lengths, base, min(base+(1<<n)-1, 258))
	}
	for c := range 30 {
		base, n := int(distInfo[c]>>16), uint(distInfo[c]&0xff)
		dists = append(dists, base, base+(1<<n)-1)
	}
	var toks []token
	for i, l := range lengths {
		toks = append(toks, match(l, dists[i%len(dists)]))
		toks = append(toks, lit(byte(i)))
	}
	for i, d := range dists {
		toks = append(toks, match(lengths[i%len(lengths)], d))
	}
	want := expand(hist, toks)

	var w bitWriter
	w.storedBlock(false, hist)
	w.fixedBlock(true, toks)
	mustAccept(t, "fixed", w.bytes(), want)

	// Dynamic, with all 286 literal/length and 30 distance codes.
	litLens := lengthsFor(ones(286), 15)
	distLens := lengthsFor(ones(30), 15)
	w = bitWriter{}
	w.storedBlock(false, hist)
	w.dynamicBlock(true, toks, litLens, distLens, false)
	mustAccept(t, "dynamic", w.bytes(), want)

	// Fixed codes 286, 287 (lengths) and 30, 31 (distances) are invalid.
	for _, bad := range []struct {
		name      string
		lit, dist int
	}{{"length code 286", 286, 0}, {"length code 287", 287, 0}, {"distance code 30", 257, 30}, {"distance code 31", 257, 31}} {
		w = bitWriter{}
		w.storedBlock(false, hist[:100])
		w.bits(1, 1)
		w.bits(1, 2)
		l, _ := fixedLens()
		lc := canonical(l)
		w.code(lc[bad.lit], uint(l[bad.lit]))
		w.code(uint32(bad.dist), 5)
		w.bits(0, 16)
		mustReject(t, bad.name, w.bytes())
	}
}

// TestMatchCopies covers each way the fast loop copies a match: every
// distance from 1 to 48 (a pattern repeated byte by byte, a repeated
// byte or pair of bytes, words that overlap the match's own output, words
// that do not)
// with lengths around the five words copied at once, each match after a
// run of literals and followed by one, in a dynamic block long enough
// for the fast loop.
func TestMatchCopies(t *testing.T) {
	hist := history(1000)
	var toks []token
	for d := 1; d <= 48; d++ {
		for _, l := range []int{3, 7, 8, 9, 16, 39, 40, 41, 47, 48, 49, 100, 257, 258} {
			for i := range 5 {
				toks = append(toks, lit(byte(d*l+i)))
			}
			toks = append(toks, match(l, d))
		}
	}
	toks = append(toks, lit('z'))
	want := expand(hist, toks)
	var w bitWriter
	w.storedBlock(false, hist)
	w.dynamicBlock(true, toks, lengthsFor(ones(286), 15), lengthsFor(ones(30), 15), false)
	mustAccept(t, "match copies", w.bytes(), want)
}

func ones(n int) []int {
	f := make([]int, n)
	for i := range f {
		f[i] = 1
	}
	return f
}

func TestDistanceOneAndFirstByte(t *testing.T) {
	// A run of distance 1 from the very first byte, then matches that
	// reach back to the first byte exactly, then one byte too far.
	toks := []token{lit('q'), match(258, 1), match(3, 1)}
	for range 200 {
		toks = append(toks, match(258, 1))
	}
	toks = append(toks, lit('r'), lit('s'))
	n := len(expand(nil, toks))
	toks = append(toks, match(10, n), match(258, n+10))
	// Short distances 2–7 with long lengths: overlapping copies.
	for d := 2; d <= 9; d++ {
		toks = append(toks, match(258, d), lit(byte(d)))
	}
	want := expand(nil, toks)
	var w bitWriter
	w.fixedBlock(true, toks)
	mustAccept(t, "distance 1 and first byte", w.bytes(), want)

	w = bitWriter{}
	w.fixedBlock(true, []token{lit('a'), lit('b'), match(3, 3)})
	mustReject(t, "distance one past the first byte", w.bytes())
	w = bitWriter{}
	w.fixedBlock(true, []token{match(3, 1)})
	mustReject(t, "match before any output", w.bytes())
}

// skewed returns code lengths 1, 2, ..., 14, 15, 15 for the given symbols:
// a complete code with two 15-bit codes.
func skewed(n int, syms ...int) []uint8 {
	lens := make([]uint8, n)
	for i, s := range syms {
		lens[s] = uint8(min(i+1, 15))
	}
	return lens
}

func TestLongestCodes(t *testing.T) {
	hist := history(33000)
	// Literal/length: 16 symbols with lengths 1..15,15, the rarest being
	// the end of block and the length code 285; distance: 16 codes with
	// lengths 1..15,15, the longest being codes 28 and 29.
	litSyms := []int{'a', 'b', 'c', 'd', 'e', 257, 258, 265, 270, 275, 280, 281, 284, 'z', 256, 285}
	distSyms := []int{0, 1, 2, 3, 4, 10, 15, 20, 21, 22, 25, 26, 27, 24, 28, 29}
	litLens := skewed(286, litSyms...)
	distLens := skewed(30, distSyms...)
	var toks []token
	for i, s := range litSyms {
		switch {
		case s < 256:
			toks = append(toks, lit(byte(s)))
		case s > 256:
			base := int(litInfo[s] >> 16)
			d := distSyms[i%len(distSyms)]
			toks = append(toks, match(base, int(distInfo[d]>>16)))
		}
	}
	for _, d := range distSyms {
		toks = append(toks, match(258, int(distInfo[d]>>16)+(1<<(distInfo[d]&0xff))-1))
	}
	want := expand(hist, toks)
	for _, plain := range []bool{false, true} {
		var w bitWriter
		w.storedBlock(false, hist)
		w.dynamicBlock(true, toks, litLens, distLens, plain)
		mustAccept(t, fmt.Sprintf("15-bit codes (plain lengths %v)", plain), w.bytes(), want)
	}
}

func TestPrecodeRepeats(t *testing.T) {
	// Used literals in runs (lengthsFor gives runs of equal lengths: code
	// 16, repeat the previous length 3–6 times) separated by unused ones
	// (runs of zeros: code 17 for 3–10, code 18 for 11–138).
	var freq [286]int
	for _, r := range [][2]int{{'a', 'a' + 9}, {'m', 'm' + 3}, {100, 104}, {110, 117}, {200, 201}, {256, 258}} {
		for i := r[0]; i < r[1]; i++ {
			freq[i] = 1
		}
	}
	litLens := lengthsFor(freq[:], 15)
	distLens := make([]uint8, 30)
	distLens[0] = 1 // a single distance code of length 1
	toks := []token{lit('a'), lit('f'), lit(100), lit(116), lit(200), match(3, 1)}
	want := expand(nil, toks)
	var w bitWriter
	used := w.dynamicBlock(true, toks, litLens, distLens, false)
	if used[16] == 0 || used[17] == 0 || used[18] == 0 {
		t.Fatalf("precode symbols used: %v", used)
	}
	mustAccept(t, "precode 16-18, single distance code", w.bytes(), want)

	// Precode lengths 2 for symbols 16, 17, 18 and 0, nothing else.
	preHeader := func(w *bitWriter) []uint32 {
		w.bits(1, 1)
		w.bits(2, 2)
		w.bits(0, 5)  // 257 literal/length codes
		w.bits(0, 5)  // 1 distance code
		w.bits(15, 4) // 19 precode lengths
		for i := range 19 {
			if i < 4 {
				w.bits(2, 3)
			} else {
				w.bits(0, 3)
			}
		}
		lens := make([]uint8, 19)
		lens[16], lens[17], lens[18], lens[0] = 2, 2, 2, 2
		return canonical(lens)
	}
	// Code 16 first, with no previous length.
	w = bitWriter{}
	pc := preHeader(&w)
	w.code(pc[16], 2)
	w.bits(0, 2)
	w.bits(0, 32)
	mustReject(t, "repeat with no previous length", w.bytes())

	// A repeat past the end of the 258 lengths.
	w = bitWriter{}
	pc = preHeader(&w)
	for range 2 {
		w.code(pc[18], 2)
		w.bits(127, 7) // 138 zeros
	}
	w.bits(0, 32)
	mustReject(t, "repeat past the end", w.bytes())
}

func TestSingleCodeTrees(t *testing.T) {
	// A literal/length code whose only symbol is the end of block: an
	// empty block.
	litLens := make([]uint8, 257)
	litLens[256] = 1
	var w bitWriter
	w.dynamicBlock(false, nil, litLens, make([]uint8, 1), false)
	w.fixedBlock(true, []token{lit('k')})
	mustAccept(t, "only end of block; empty distance code", w.bytes(), []byte("k"))

	// Literal-only block with an empty distance code.
	litLens = lengthsFor(ones(258), 15)
	w = bitWriter{}
	w.dynamicBlock(true, []token{lit('x'), lit('y')}, litLens, make([]uint8, 30), false)
	mustAccept(t, "empty distance code", w.bytes(), []byte("xy"))

	// A match with an empty distance code.
	w = bitWriter{}
	w.dynamicHeader(true, litLens, make([]uint8, 30), false)
	lc := canonical(litLens)
	w.code(lc['x'], uint(litLens['x']))
	w.code(lc[257], uint(litLens[257]))
	w.bits(0, 32)
	mustReject(t, "match with an empty distance code", w.bytes())

	// A single distance code of length 1; its unused codeword '1' is
	// invalid.
	distLens := make([]uint8, 30)
	distLens[0] = 1
	w = bitWriter{}
	w.dynamicBlock(true, []token{lit('x'), match(3, 1)}, litLens, distLens, false)
	mustAccept(t, "single distance code", w.bytes(), []byte("xxxx"))
	w = bitWriter{}
	w.dynamicHeader(true, litLens, distLens, false)
	w.code(lc['x'], uint(litLens['x']))
	w.code(lc[257], uint(litLens[257]))
	w.bits(1, 1) // the unused codeword
	w.code(lc[256], uint(litLens[256]))
	mustReject(t, "unused codeword of a single code", w.bytes())

	// Single code of length 2: incomplete, rejected.
	distLens = make([]uint8, 30)
	distLens[0] = 2
	w = bitWriter{}
	w.dynamicBlock(true, []token{lit('x')}, litLens, distLens, false)
	mustReject(t, "single code of length 2", w.bytes())

	// Over-subscribed and incomplete literal/length codes.
	over := lengthsFor(ones(257), 15)
	over[0]--
	w = bitWriter{}
	w.dynamicBlock(true, []token{lit(1)}, over, make([]uint8, 1), false)
	mustReject(t, "over-subscribed code", w.bytes())
	under := lengthsFor(ones(257), 15)
	under[0]++
	w = bitWriter{}
	w.dynamicBlock(true, []token{lit(1)}, under, make([]uint8, 1), false)
	mustReject(t, "incomplete code", w.bytes())
}

// TestBitFlipsAndTruncations checks the verdict on every truncation of
// several streams and on bit flips (every bit of the first 400 bytes and the
// last 16). By default it checks a sample: the truncations and flipped
// bytes near each end, and an evenly spread sample of the others; with
// TFLOCK_LONG_TESTS=1, all of them.
func TestBitFlipsAndTruncations(t *testing.T) {
	litLens := lengthsFor(ones(286), 15)
	distLens := make([]uint8, 30)
	distLens[0] = 1
	var w bitWriter
	w.dynamicBlock(false, []token{lit('x'), match(5, 1), lit('y')}, litLens, distLens, false)
	w.storedBlock(false, []byte("stored bytes"))
	w.fixedBlock(true, []token{lit('z'), match(20, 3)})
	small := w.bytes()

	streams := map[string][]byte{"hand-made": small}
	in := testInputs(t)
	streams["text@1"] = compressStd(t, in["getty"], 1)
	streams["text@9"] = compressK(t, in["getty"], 9)
	streams["binary@6"] = compressStd(t, in["binary"][:20000], 6)
	streams["huffman"] = compressStd(t, in["getty"], stdflate.HuffmanOnly)
	streams["stored"] = compressStd(t, in["getty"], 0)
	for name, s := range streams {
		// Every truncation.
		for n := range len(s) {
			if longtest.Keep(n, len(s), 32, 80) {
				checkMode(t, fmt.Sprintf("%s cut at %d", name, n), s[:n], true)
			}
		}
		// Every bit flip of the first 400 bytes, and of the last 16.
		var flipped []int
		for i := range len(s) {
			if i < 400 || i >= len(s)-16 {
				flipped = append(flipped, i)
			}
		}
		for k, i := range flipped {
			if !longtest.Keep(k, len(flipped), 8, 24) {
				continue
			}
			for bit := range 8 {
				b := append([]byte{}, s...)
				b[i] ^= 1 << bit
				checkMode(t, fmt.Sprintf("%s bit %d.%d", name, i, bit), b, true)
			}
		}
	}
}

func TestTrailingDataIgnored(t *testing.T) {
	in := testInputs(t)["getty"]
	s := append(compressStd(t, in, 6), "trailing garbage"...)
	mustAccept(t, "trailing data", s, in)
}

func TestProgress(t *testing.T) {
	in := testInputs(t)["binary"]
	s := compressK(t, in, 6)
	var d Decoder
	d.ResetBytes(s)
	out := make([]byte, len(in))
	var seen []int
	err := d.DecodeAll(out, 64<<10, func(n int) error {
		// The output before n is final: it must already equal the input.
		if !bytes.Equal(out[:n], in[:n]) {
			t.Fatalf("progress %d: output before it is not final", n)
		}
		seen = append(seen, n)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < len(in)/(64<<10) || seen[len(seen)-1] != len(in) {
		t.Fatalf("progress calls %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] || seen[i]-seen[i-1] > 64<<10 {
			t.Fatalf("progress steps %v", seen)
		}
	}
}

func TestProgressError(t *testing.T) {
	in := testInputs(t)["binary"]
	s := compressK(t, in, 6)
	var d Decoder
	d.ResetBytes(s)
	stop := errors.New("stop")
	calls := 0
	err := d.DecodeAll(make([]byte, len(in)), 64<<10, func(n int) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Fatalf("error %v after %d calls; want the progress function's after 2", err, calls)
	}
}

func TestReaderError(t *testing.T) {
	in := testInputs(t)["text"]
	s := compressStd(t, in, 6)
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(s[:len(s)/2]), iotest.ErrReader(boom))
	if _, err := decodeChunks(r, 64<<10, len(in)); !errors.Is(err, boom) {
		t.Fatalf("error %v, want the reader's", err)
	}
}

func TestDecoderReuse(t *testing.T) {
	in := testInputs(t)
	var d Decoder
	for _, name := range []string{"text", "random", "binary", "zeros", "getty"} {
		s := compressK(t, in[name], 6)
		d.ResetBytes(s)
		out := make([]byte, len(in[name]))
		if err := d.DecodeAll(out, 0, nil); err != nil || !bytes.Equal(out, in[name]) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
