package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReadTreeProviders reads a root module of one file requiring 50
// providers, as the providers lock benchmarks of resolve/install and
// internal/interop do.
func BenchmarkReadTreeProviders(b *testing.B) {
	var tf strings.Builder
	tf.WriteString("terraform {\n  required_providers {\n")
	for i := range 50 {
		name := fmt.Sprintf("p%02d", i)
		fmt.Fprintf(&tf, "    %s = {\n      source  = \"%s/acme/%s\"\n      version = \"~> 1.0\"\n    }\n", name, "registry.opentofu.org", name)
	}
	tf.WriteString("  }\n}\n")
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, diags := ReadTree(dir, "", ReadOptions{})
		if diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
