package testdir

import (
	"os"
	"strings"
	"testing"
)

// Vector is one row of opentofu/HASH-VECTORS.tsv.
type Vector struct {
	Kind string // "dir" or "zip"
	H1   string // "h1:..." or "ERROR: ..."
	ZH   string // for zips
}

// HashVectors reads HASH-VECTORS.tsv, keyed by the path relative to the
// opentofu directory (slash-separated).
func HashVectors(t testing.TB) map[string]Vector {
	t.Helper()
	b, err := os.ReadFile(OpenTofu(t, "HASH-VECTORS.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Vector{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 4 {
			t.Fatalf("HASH-VECTORS.tsv line %d: %d fields", i+1, len(f))
		}
		out[f[1]] = Vector{Kind: f[0], H1: f[2], ZH: f[3]}
	}
	return out
}
