package flate

import (
	"bytes"
	"testing"
)

// FuzzDecode compares the decoder with compress/flate on arbitrary
// streams: the same verdict, the same output, whole or in chunks, and an
// error for a declared size one too small or too large. It must never
// panic. The seed corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	var w bitWriter
	w.fixedBlock(false, []token{lit('a'), match(10, 1)})
	w.storedBlock(false, []byte("stored"))
	w.dynamicBlock(true, []token{lit('b'), match(4, 7)}, lengthsFor(ones(286), 15), lengthsFor(ones(30), 15), false)
	f.Add(w.bytes())
	f.Add(compressStd(f, []byte("hello, hello, hello world"), 6))
	f.Add(compressK(f, bytes.Repeat([]byte("abcdefgh"), 100), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkMode(t, "fuzz", data, true)
	})
}
