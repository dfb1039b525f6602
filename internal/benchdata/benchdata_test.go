package benchdata

import (
	"bytes"
	"compress/flate"
	"testing"
)

// The data is deterministic and compresses like an executable (the
// figures quoted in the benchmarks' documentation: about 2.4:1).
func TestPseudoBinary(t *testing.T) {
	a, b := PseudoBinary(7, 1<<20), PseudoBinary(7, 1<<20)
	if !bytes.Equal(a, b) {
		t.Fatal("the same seed gave different bytes")
	}
	if bytes.Equal(a, PseudoBinary(8, 1<<20)) {
		t.Fatal("two seeds gave the same bytes")
	}
	if len(PseudoBinary(1, 1000)) != 1000 {
		t.Fatal("wrong length")
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.DefaultCompression)
	w.Write(a)
	w.Close()
	if ratio := float64(len(a)) / float64(z.Len()); ratio < 2 || ratio > 3 {
		t.Errorf("compression ratio %.2f, want about 2.4", ratio)
	}
}
