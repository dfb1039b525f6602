package oci_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// TestArchiveLimits: a module layer whose zip declares more bytes than
// Options.Limits.MaxBytes (12 MiB of zeros in a few kilobytes), or holds
// more entries than Limits.MaxEntries, is refused with an error wrapping
// source.ErrTooLarge (oci.ErrArchiveTooLarge is the same sentinel) that
// names the repository, and nothing is left behind.
func TestArchiveLimits(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{})
	ctx := context.Background()
	r := repoOf(t, s, "mods/limits")
	bomb := map[string]string{}
	for i := range 12 {
		bomb[fmt.Sprintf("zeros%02d", i)] = strings.Repeat("\x00", 1<<20)
	}
	many := map[string]string{}
	for i := range 300 {
		many[fmt.Sprintf("f%03d.tf", i)] = "# x\n"
	}
	for _, tc := range []struct {
		tag    string
		files  map[string]string
		limits source.Limits
	}{
		{"bomb", bomb, source.Limits{MaxBytes: 4 << 20}},
		{"many", many, source.Limits{MaxEntries: 100}},
	} {
		if _, err := ocitest.PushModule(ctx, r, mustZip(t, tc.files), tc.tag); err != nil {
			t.Fatal(err)
		}
		opts := s.SourceOptions(nil)
		opts.Limits = tc.limits
		root := t.TempDir()
		pkg := source.ModulePackage{Source: "oci://" + s.Host() + "/mods/limits", Ref: tc.tag}
		_, err := oci.NewSource(opts).Fetch(ctx, pkg, filepath.Join(root, "pkg"))
		if !errors.Is(err, source.ErrTooLarge) || !errors.Is(err, oci.ErrArchiveTooLarge) {
			t.Errorf("%s: got %v, want an error wrapping source.ErrTooLarge", tc.tag, err)
		} else if !strings.Contains(err.Error(), "mods/limits") {
			t.Errorf("%s: error %q does not name the repository", tc.tag, err)
		}
		if left, _ := os.ReadDir(root); len(left) != 0 {
			t.Errorf("%s: left behind after a failed fetch: %v", tc.tag, left)
		}
		if _, err := oci.NewSource(s.SourceOptions(nil)).Fetch(ctx, pkg, filepath.Join(t.TempDir(), "ok")); err != nil {
			t.Errorf("%s with the default limits: %v", tc.tag, err)
		}
	}
}
