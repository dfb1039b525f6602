// Package benchdata generates the deterministic data that benchmarks and
// test servers use in place of real provider executables: bytes that
// compress about as well as a Go program does (about 2.4:1 with DEFLATE
// at its default level), so that inflating and hashing them costs what a
// real provider costs.
package benchdata

import "math/rand/v2"

// phrase stands for the symbol and path strings a Go executable repeats.
var phrase = []byte("runtime.gopanic\x00\x00\x00github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema.(*Resource).Apply\x00")

// PseudoBinary returns n bytes of provider-like content for seed: runs of
// random bytes, pieces of a repeated phrase, and runs of zeros, in random
// order. The same seed and n always give the same bytes.
func PseudoBinary(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]byte, 0, n+64)
	for len(out) < n {
		switch r.IntN(3) {
		case 0:
			k := 8 + r.IntN(18)
			for range k {
				out = append(out, byte(r.Uint32()))
			}
		case 1:
			k := 8 + r.IntN(40)
			out = append(out, phrase[r.IntN(len(phrase)-k):][:k]...)
		default:
			k := 4 + r.IntN(12)
			for range k {
				out = append(out, 0)
			}
		}
	}
	return out[:n]
}
