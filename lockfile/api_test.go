package lockfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

const (
	h1A = hash.Hash("h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=")
	h1B = hash.Hash("h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=")
	zhA = hash.Hash("zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176")
)

var (
	nullAddr   = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	randomAddr = tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/random")
)

const sample = `# Copyright notice kept by Patch.
# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.2.0"
  constraints = "~> 3.0"
  # checksums for linux and darwin
  hashes = [
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

# The random provider is for tests.
provider "registry.opentofu.org/hashicorp/random" {
  version = "3.6.0"
}

module "vpc" {
  version = "3.19.0"
  source  = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
}
`

func mustParse(t *testing.T, src string) *lockfile.File {
	t.Helper()
	f, err := lockfile.Parse([]byte(src), "test.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestEditingAPI(t *testing.T) {
	f := lockfile.New()
	if f.Provider(nullAddr) != nil || f.ProviderHashes(nullAddr) != nil {
		t.Fatal("new file has a provider")
	}
	if ok, err := f.AddProviderHashes(nullAddr, h1A); ok || err != nil {
		t.Fatal("AddProviderHashes on an absent provider reported a change")
	}
	f.SetProvider(&lockfile.ProviderLock{Addr: randomAddr, Version: versions.MustParse("3.6.0")})
	f.SetProvider(&lockfile.ProviderLock{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Hashes: []hash.Hash{zhA, h1A, zhA}})
	if got := f.ProviderHashes(nullAddr); !slices.Equal(got, []hash.Hash{h1A, zhA}) {
		t.Errorf("hashes = %v, want sorted and unique", got)
	}
	if ok, err := f.AddProviderHashes(nullAddr, h1B, h1A); !ok || err != nil {
		t.Error("adding a new hash reported no change")
	}
	if ok, err := f.AddProviderHashes(nullAddr, h1B); ok || err != nil {
		t.Error("adding a present hash reported a change")
	}
	if got := f.ProviderHashes(nullAddr); !slices.Equal(got, []hash.Hash{h1A, h1B, zhA}) {
		t.Errorf("hashes = %v", got)
	}
	var order []string
	for p := range f.Providers() {
		order = append(order, p.Addr.String())
	}
	if want := []string{nullAddr.String(), randomAddr.String()}; !slices.Equal(order, want) {
		t.Errorf("Providers order %v, want %v", order, want)
	}
	f.SetModule(&lockfile.ModuleLock{Path: "b", Source: "example.com/x"})
	f.SetModule(&lockfile.ModuleLock{Path: "a.c", Source: "example.com/y"})
	f.SetModule(&lockfile.ModuleLock{Path: "a", Source: "example.com/z"})
	var paths []string
	for m := range f.Modules() {
		paths = append(paths, m.Path)
	}
	if want := []string{"a", "a.c", "b"}; !slices.Equal(paths, want) {
		t.Errorf("Modules order %v, want %v", paths, want)
	}
	if ok, err := f.AddModuleHashes("a", h1A); !ok || err != nil || !slices.Equal(f.ModuleHashes("a"), []hash.Hash{h1A}) {
		t.Error("AddModuleHashes")
	}
	if !f.RemoveModule("b") || f.RemoveModule("b") || f.Module("b") != nil {
		t.Error("RemoveModule")
	}
	if !f.RemoveProvider(randomAddr) || f.RemoveProvider(randomAddr) {
		t.Error("RemoveProvider")
	}
	// What was built must survive a round trip.
	g := mustParse(t, string(f.Bytes()))
	if !lockfile.Equal(f, g) {
		t.Errorf("round trip changed the file: %v", lockfile.Changes(f, g))
	}
}

func TestParseErrorIsTyped(t *testing.T) {
	_, err := lockfile.Parse([]byte(`provider "aws" {}`), "x.hcl")
	var pe *lockfile.ParseError
	if !errors.As(err, &pe) || !pe.Diagnostics.HasErrors() {
		t.Fatalf("err = %v, want *ParseError with errors", err)
	}
	if !strings.HasPrefix(err.Error(), "x.hcl:1,10: Non-normalized provider source address") {
		t.Errorf("Error() = %q", err.Error())
	}
	// A valid file gives a nil error, never a typed nil.
	if _, err := lockfile.Parse([]byte(""), "empty.hcl"); err != nil {
		t.Errorf("empty file: %v", err)
	}
}

func TestParseFileMissingAndWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".terraform.lock.hcl")
	f, err := lockfile.ParseFile(path)
	if err != nil || f == nil || len(slices.Collect(f.Providers())) != 0 {
		t.Fatalf("missing file: %v, %v", f, err)
	}
	f.SetProvider(&lockfile.ProviderLock{Addr: nullAddr, Version: versions.MustParse("3.2.0")})
	if err := lockfile.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode: %v %v", st, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f.Provider(nullAddr).Version = versions.MustParse("3.2.1")
	if err := lockfile.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode not preserved: %v", st.Mode())
	}
	g, err := lockfile.ParseFile(path)
	if err != nil || g.Provider(nullAddr).Version.String() != "3.2.1" {
		t.Fatalf("reread: %v %v", g, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	// A path whose directory does not exist: nothing may be created.
	bad := filepath.Join(dir, "missing", ".terraform.lock.hcl")
	if err := lockfile.WriteFile(bad, lockfile.New()); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
	// A path that is a directory: the rename fails, and the directory and
	// its content are intact, with no temporary file left.
	target := filepath.Join(dir, "lock")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := lockfile.WriteFile(target, lockfile.New()); err == nil {
		t.Fatal("WriteFile over a directory succeeded")
	}
	if b, err := os.ReadFile(filepath.Join(target, "keep")); err != nil || string(b) != "x" {
		t.Errorf("old content damaged: %q %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if _, err := os.Stat(bad); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat %s: %v", bad, err)
	}
}

func TestChanges(t *testing.T) {
	old := mustParse(t, sample)
	new := old.Clone()
	new.Provider(nullAddr).Version = versions.MustParse("3.2.1")
	new.Provider(nullAddr).Hashes = []hash.Hash{h1B}
	new.AddProviderHashes(randomAddr) // no-op
	new.Provider(randomAddr).Constraints = ">= 3.0.0"
	aws := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")
	new.SetProvider(&lockfile.ProviderLock{Addr: aws, Version: versions.MustParse("5.0.0")})
	new.Module("vpc").Version = versions.MustParse("3.1.0")
	new.SetModule(&lockfile.ModuleLock{Path: "git", Source: "git::https://example.com/x.git", Commit: strings.Repeat("a", 40)})

	got := lockfile.Changes(old, new)
	var lines []string
	for _, c := range got {
		lines = append(lines, c.String())
	}
	want := []string{
		"registry.opentofu.org/hashicorp/aws: added 5.0.0",
		"registry.opentofu.org/hashicorp/null: upgraded 3.2.0 to 3.2.1 (1 hash added, 2 removed)",
		`registry.opentofu.org/hashicorp/random: constraints changed from "" to ">= 3.0.0"`,
		`module "git": added (no version)`,
		`module "vpc": downgraded 3.19.0 to 3.1.0`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if lockfile.Equal(old, new) || lockfile.EqualIgnoringHashes(old, new) {
		t.Error("Equal on different files")
	}
	onlyHashes := old.Clone()
	onlyHashes.AddProviderHashes(nullAddr, h1B)
	if lockfile.Equal(old, onlyHashes) || !lockfile.EqualIgnoringHashes(old, onlyHashes) {
		t.Error("hash-only change misjudged")
	}
	if c := lockfile.Changes(old, onlyHashes); len(c) != 1 || c[0].Kind != lockfile.HashesChanged {
		t.Errorf("hash-only change = %v", c)
	}
	repin := old.Clone()
	repin.Module("vpc").Source = "registry.opentofu.org/terraform-aws-modules/vpc/google"
	if c := lockfile.Changes(old, repin); len(c) != 1 || c[0].Kind != lockfile.Repinned {
		t.Errorf("repin = %v", c)
	}
	if s := lockfile.Summary(nil); s != "" {
		t.Errorf("Summary(nil) = %q", s)
	}
	// The closing lines of the note "tofu init" prints when it changed the
	// lock file (OpenTofu's init view, LockFileChanged), word for word.
	const tofuNote = "in the .terraform.lock.hcl file. Review those changes and commit them to your\n" +
		"version control system if they represent changes you intended to make.\n"
	if s := lockfile.Summary(got); !strings.HasSuffix(s, tofuNote) || !strings.HasPrefix(s, "- registry.opentofu.org/hashicorp/aws: added 5.0.0\n") {
		t.Errorf("Summary = %q", s)
	}
	if lockfile.Changes(nil, nil) != nil {
		t.Error("Changes(nil, nil)")
	}
}

// TestMerge replays what OpenTofu 1.12 does to a file with module locks: it
// warns, then writes the providers only.
func TestMerge(t *testing.T) {
	previous := mustParse(t, sample)
	rewrittenByTofu := mustParse(t, `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.2.1"
  constraints = "~> 3.0"
}
`)
	got := lockfile.Merge(rewrittenByTofu, previous)
	if got.Module("vpc") == nil || got.Module("vpc").Version.String() != "3.19.0" {
		t.Fatalf("module lock not recovered: %s", got.Bytes())
	}
	if got.Provider(randomAddr) != nil || got.Provider(nullAddr).Version.String() != "3.2.1" {
		t.Error("providers must come from the rewritten file")
	}
	if rewrittenByTofu.Module("vpc") != nil {
		t.Error("Merge modified its argument")
	}
	// A module the rewritten file has wins.
	rewrittenByTofu.SetModule(&lockfile.ModuleLock{Path: "vpc", Source: "example.com/other"})
	if got := lockfile.Merge(rewrittenByTofu, previous); got.Module("vpc").Source != "example.com/other" {
		t.Error("Merge overwrote a module lock of the rewritten file")
	}
}

func TestPatchPreserves(t *testing.T) {
	f := mustParse(t, sample)
	// No change: identical bytes.
	out, err := lockfile.Patch([]byte(sample), "x", f)
	if err != nil || string(out) != sample {
		t.Fatalf("no-op patch changed the file:\n%s (%v)", out, err)
	}
	f.Provider(nullAddr).Version = versions.MustParse("3.2.1")
	f.AddProviderHashes(nullAddr, h1B)
	f.Provider(randomAddr).Constraints = ">= 3.0.0"
	f.RemoveModule("vpc")
	aws := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")
	f.SetProvider(&lockfile.ProviderLock{Addr: aws, Version: versions.MustParse("5.0.0"), Hashes: []hash.Hash{h1A}})
	f.SetModule(&lockfile.ModuleLock{Path: "app", Source: "oci://example.com/app", Digest: "sha256:" + strings.Repeat("0", 64)})
	out, err = lockfile.Patch([]byte(sample), "x", f)
	if err != nil {
		t.Fatal(err)
	}
	want := `# Copyright notice kept by Patch.
# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/aws" {
  version = "5.0.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

provider "registry.opentofu.org/hashicorp/null" {
  version     = "3.2.1"
  constraints = "~> 3.0"
  # checksums for linux and darwin
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=",
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
  ]
}

# The random provider is for tests.
provider "registry.opentofu.org/hashicorp/random" {
  version = "3.6.0"
  constraints = ">= 3.0.0"
}

module "app" {
  source = "oci://example.com/app"
  digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
}
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	g := mustParse(t, string(out))
	if !lockfile.Equal(f, g) {
		t.Errorf("patched file does not hold the model: %v", lockfile.Changes(f, g))
	}
}

func TestPatchCRLFAndUnknown(t *testing.T) {
	src := strings.ReplaceAll(`# header
provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
  future  = { a = 1 }
}

doodad "kept" {
  x = 1
}
`, "\n", "\r\n")
	f, err := lockfile.ParseOptions{Lenient: true}.Parse([]byte(src), "x")
	if err != nil {
		t.Fatal(err)
	}
	f.AddProviderHashes(nullAddr, h1A)
	out, err := lockfile.Patch([]byte(src), "x", f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "doodad \"kept\" {\r\n  x = 1\r\n}\r\n") || !strings.Contains(string(out), "  future  = { a = 1 }\r\n") {
		t.Errorf("unknown items not kept:\n%q", out)
	}
	if strings.Contains(strings.ReplaceAll(string(out), "\r\n", ""), "\n") {
		t.Errorf("bare LF inserted into a CRLF file:\n%q", out)
	}
	g, err := lockfile.ParseOptions{Lenient: true}.Parse(out, "out")
	if err != nil || !slices.Equal(g.ProviderHashes(nullAddr), []hash.Hash{h1A}) {
		t.Errorf("patched: %v %v", g, err)
	}
}

// TestPatchLayouts checks arguments added to blocks laid out in ways the
// canonical writer never produces: a single-line block (HCL allows only one
// argument in it, so it is opened up) and tab indentation (kept).
func TestPatchLayouts(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		edit func(f *lockfile.File)
		want string
	}{
		"single-line block, two arguments added": {
			src: "provider \"registry.opentofu.org/hashicorp/null\" { version = \"3.2.0\" } # kept\n",
			edit: func(f *lockfile.File) {
				f.Provider(nullAddr).Version = versions.MustParse("3.2.1")
				f.Provider(nullAddr).Constraints = "~> 3.0"
				f.AddProviderHashes(nullAddr, h1A)
			},
			want: "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"3.2.1\"\n  constraints = \"~> 3.0\"\n  hashes = [\n    \"" + string(h1A) + "\",\n  ]\n} # kept\n",
		},
		"indented single-line block": {
			src:  "  module \"a\" {source = \"example.com/a/b/c\"}\n",
			edit: func(f *lockfile.File) { f.Module("a").Commit = strings.Repeat("0", 40) },
			want: "  module \"a\" {\n    source = \"example.com/a/b/c\"\n    commit = \"" + strings.Repeat("0", 40) + "\"\n  }\n",
		},
		"tab indentation": {
			src:  "provider \"registry.opentofu.org/hashicorp/null\" {\n\tversion = \"3.2.0\"\n}\n",
			edit: func(f *lockfile.File) { f.AddProviderHashes(nullAddr, h1A) },
			want: "provider \"registry.opentofu.org/hashicorp/null\" {\n\tversion = \"3.2.0\"\n\thashes = [\n\t\t\"" + string(h1A) + "\",\n\t]\n}\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := mustParse(t, tc.src)
			tc.edit(f)
			out, err := lockfile.Patch([]byte(tc.src), "x", f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(out)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if g := mustParse(t, string(out)); !lockfile.Equal(f, g) {
				t.Errorf("patched file does not hold the model: %v", lockfile.Changes(f, g))
			}
		})
	}
}

// TestVersionDiagnostics checks the advice of a bad version: the normalized
// spelling where one exists, else the reason and what to write.
func TestVersionDiagnostics(t *testing.T) {
	for raw, want := range map[string]string{
		"v1.2":     `must be written in normalized form: "1.2.0".`,
		"1.02":     `must be written in normalized form: "1.2.0".`,
		"1.0.0-01": `is invalid: version segment starts with 0. Write the exact version`,
		"":         `is invalid: empty version string. Write the exact version`,
	} {
		src := "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"" + raw + "\"\n}\n"
		_, err := lockfile.Parse([]byte(src), "x")
		var pe *lockfile.ParseError
		if !errors.As(err, &pe) || len(pe.Diagnostics) != 1 {
			t.Fatalf("%q: %v", raw, err)
		}
		if d := pe.Diagnostics[0]; !strings.Contains(d.Detail, want) {
			t.Errorf("%q: detail %q, want it to contain %q", raw, d.Detail, want)
		}
	}
}

func TestChangesModuleVersionGainedOrLost(t *testing.T) {
	old := lockfile.New()
	old.SetModule(&lockfile.ModuleLock{Path: "m", Source: "git::https://example.com/m.git", Version: versions.MustParse("1.0.0"), Commit: strings.Repeat("a", 40)})
	refPinned := old.Clone()
	refPinned.Module("m").Version = versions.Version{}
	for _, tc := range []struct {
		a, b *lockfile.File
		want string
	}{
		{old, refPinned, `module "m": repinned from 1.0.0 to (no version)`},
		{refPinned, old, `module "m": repinned from (no version) to 1.0.0`},
	} {
		c := lockfile.Changes(tc.a, tc.b)
		if len(c) != 1 || c[0].Kind != lockfile.Repinned || c[0].String() != tc.want {
			t.Errorf("Changes = %v, want %q", c, tc.want)
		}
	}
	if got := lockfile.Merge(nil, old); got.Module("m") == nil {
		t.Error("Merge(nil, previous) lost the module lock")
	}
	if got := lockfile.Merge(old, nil); !lockfile.Equal(got, old) {
		t.Error("Merge(rewritten, nil) changed the file")
	}
}

func TestChangeStringHashCounts(t *testing.T) {
	old := lockfile.New()
	old.SetProvider(&lockfile.ProviderLock{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Hashes: []hash.Hash{h1A, zhA}})
	added := old.Clone()
	added.AddProviderHashes(nullAddr, h1B)
	removed := old.Clone()
	removed.Provider(nullAddr).Hashes = []hash.Hash{h1A}
	for _, tc := range []struct {
		a, b *lockfile.File
		want string
	}{
		{old, added, "registry.opentofu.org/hashicorp/null: hashes changed (1 hash added)"},
		{old, removed, "registry.opentofu.org/hashicorp/null: hashes changed (1 hash removed)"},
		{lockfile.New(), old, "registry.opentofu.org/hashicorp/null: added 3.2.0"},
		{old, lockfile.New(), "registry.opentofu.org/hashicorp/null: removed 3.2.0"},
	} {
		c := lockfile.Changes(tc.a, tc.b)
		if len(c) != 1 || c[0].String() != tc.want {
			t.Errorf("Changes = %v, want %q", c, tc.want)
		}
	}
}

func TestRemoveDuringIteration(t *testing.T) {
	f := mustParse(t, sample)
	var seen []string
	for p := range f.Providers() {
		seen = append(seen, p.Addr.String())
		f.RemoveProvider(randomAddr) // the later one: skipped, never nil
	}
	if want := []string{nullAddr.String()}; !slices.Equal(seen, want) {
		t.Errorf("saw %v, want %v", seen, want)
	}
}

func TestWriteFileRefusesInvalidContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	old := []byte("# old content\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	f := lockfile.New()
	if err := f.SetProvider(&lockfile.ProviderLock{Addr: nullAddr}); err == nil { // no version
		t.Fatal("SetProvider accepts a lock without a version")
	}
	// A stored lock changed in place escapes the setters; WriteFile
	// still refuses it.
	f.SetProvider(&lockfile.ProviderLock{Addr: nullAddr, Version: versions.MustParse("3.2.0")})
	f.Provider(nullAddr).Version = versions.Version{}
	err := lockfile.WriteFile(path, f)
	var pe *lockfile.ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want a wrapped *ParseError naming the file", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(old) {
		t.Errorf("old file changed: %q", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}

// TestWriteFileInvalidContentWinsOverWriteFailure: the parse-back runs
// beside the write of the temporary file, yet content that would not parse
// back is the error reported even when the write fails first (here: the
// directory does not exist).
func TestWriteFileInvalidContentWinsOverWriteFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", ".terraform.lock.hcl")
	f := lockfile.New()
	f.SetProvider(&lockfile.ProviderLock{Addr: nullAddr, Version: versions.MustParse("3.2.0")})
	f.Provider(nullAddr).Version = versions.Version{} // no version, past the setter
	for range 20 {
		err := lockfile.WriteFile(path, f)
		var pe *lockfile.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v, want a wrapped *ParseError", err)
		}
	}
	// A valid file into the same missing directory: the write's error.
	f.SetProvider(&lockfile.ProviderLock{Addr: nullAddr, Version: versions.MustParse("3.2.0")})
	err := lockfile.WriteFile(path, f)
	var pe *lockfile.ParseError
	if err == nil || errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want the write's not-exist error", err)
	}
}

func TestChangesCompareNormalizedConstraints(t *testing.T) {
	a := lockfile.New()
	a.SetProvider(&lockfile.ProviderLock{Addr: nullAddr, Version: versions.MustParse("3.2.0"), Constraints: ">=3.0"})
	b := mustParse(t, string(a.Bytes())) // the writer normalizes: ">= 3.0.0"
	if got := b.Provider(nullAddr).Constraints; got != ">= 3.0.0" {
		t.Fatalf("written constraints %q", got)
	}
	if c := lockfile.Changes(a, b); len(c) != 0 {
		t.Errorf("spelling of the same constraints reported as a change: %v", c)
	}
}
