package lockfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

const (
	commitA = "1111111111111111111111111111111111111111"
	commitB = "2222222222222222222222222222222222222222"
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

// pinnedSample is the canonical form of module locks pinned by their
// source: a git ref and an OCI tag.
const pinnedSample = `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

module "net" {
  source = "git::https://git.example.test/acme/net.git"
  ref    = "v1.0.0"
  commit = "1111111111111111111111111111111111111111"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

module "store" {
  source = "oci://oci.example.test/modules/store"
  tag    = "1.0.0_build"
  digest = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
}
`

func TestModuleRefAndTagRoundTrip(t *testing.T) {
	f := mustParse(t, pinnedSample)
	net, store := f.Module("net"), f.Module("store")
	if net == nil || net.Ref != "v1.0.0" || net.Tag != "" || net.Commit != commitA {
		t.Errorf("net = %+v", net)
	}
	if store == nil || store.Tag != "1.0.0_build" || store.Ref != "" || store.Digest != digestA {
		t.Errorf("store = %+v", store)
	}
	if diff := cmp.Diff(pinnedSample, string(f.Bytes())); diff != "" {
		t.Errorf("canonical form (-want +got):\n%s", diff)
	}
	// Built from the model, the same bytes.
	g := lockfile.New()
	g.SetModule(&lockfile.ModuleLock{Path: "net", Source: "git::https://git.example.test/acme/net.git", Ref: "v1.0.0", Commit: commitA, Hashes: []hash.Hash{h1A}})
	g.SetModule(&lockfile.ModuleLock{Path: "store", Source: "oci://oci.example.test/modules/store", Tag: "1.0.0_build", Digest: digestA})
	if got := string(g.Bytes()); got != pinnedSample {
		t.Errorf("written from the model:\n%s", got)
	}
	if !lockfile.Equal(f, g) {
		t.Errorf("Equal: %v", lockfile.Changes(f, g))
	}
	// Merge keeps the pin of a module lock it restores.
	if m := lockfile.Merge(lockfile.New(), f).Module("net"); m == nil || m.Ref != "v1.0.0" {
		t.Errorf("Merge lost the ref: %+v", m)
	}
}

func TestModuleRefAndTagStrict(t *testing.T) {
	block := func(body string) string {
		return "module \"m\" {\n" + body + "\n}\n"
	}
	git := `source = "git::https://git.example.test/m.git"` + "\n"
	oci := `source = "oci://oci.example.test/m"` + "\n"
	for _, tc := range []struct {
		src, summary, detail string
	}{
		{block(git + `ref = ""`), "Invalid module ref", "it is empty"},
		{block(git + `ref = "main branch"`), "Invalid module ref", `contains ' '`},
		{block(git + `ref = "v1..2"`), "Invalid module ref", `".."`},
		{block(git + `ref = "-x"`), "Invalid module ref", `starts with "-"`},
		{block(git + `ref = "a:b"`), "Invalid module ref", `contains ':'`},
		{block(git + `ref = "x.lock"`), "Invalid module ref", `".lock"`},
		{block(git + `ref = null`), "Invalid module ref", "it is null"},
		{block(git + `ref = 3`), "", ""}, // a number converts to a string: "3" is a valid ref
		{block(oci + `tag = "-x"`), "Invalid module tag", "an OCI tag"},
		{block(oci + `tag = "a/b"`), "Invalid module tag", "an OCI tag"},
		{block(oci + `tag = "` + strings.Repeat("a", 129) + `"`), "Invalid module tag", "an OCI tag"},
		{block(oci + `ref = "main"`), "Invalid module ref", "for an OCI source"},
		{block(git + `tag = "1.0.0"`), "Invalid module tag", "not an OCI repository"},
		{block(git + `ref = "main"` + "\n" + `tag = "x"`), "Invalid module tag", "both a git ref and an OCI tag"},
		{block(`version = "1.0.0"` + "\n" + git + `ref = "v1.0.0"`), "Invalid module ref", "a git ref and a version"},
		{block(git + `ref = "v1.0.0"` + "\n" + `constraints = "~> 1.0"`), "Invalid module ref", "a git ref and a version"},
		{block(`version = "1.0.0"` + "\n" + oci + `tag = "1.0.0"`), "Invalid module tag", "an OCI tag and a version"},
	} {
		_, err := lockfile.Parse([]byte(tc.src), "x.hcl")
		if tc.summary == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.src, err)
			}
			continue
		}
		var pe *lockfile.ParseError
		if !errors.As(err, &pe) || len(pe.Diagnostics) != 1 {
			t.Errorf("%s: err = %v, want one diagnostic %q", tc.src, err, tc.summary)
			continue
		}
		d := pe.Diagnostics[0]
		if d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) || d.Subject == nil || d.Subject.Start.Line < 2 {
			t.Errorf("%s: got %q %q at %v, want %q containing %q, on the argument's line", tc.src, d.Summary, d.Detail, d.Subject, tc.summary, tc.detail)
		}
	}
	// Valid refs as people write them.
	for _, ref := range []string{"main", "v1.2.0", "refs/tags/v1", "tags/0.2.2", "feature/x-1", "0123abc", commitA, "release_1.0"} {
		if _, err := lockfile.Parse([]byte(block(git+`ref = "`+ref+`"`)), "x.hcl"); err != nil {
			t.Errorf("ref %q: %v", ref, err)
		}
	}
}

func TestPatchModuleRef(t *testing.T) {
	f := mustParse(t, pinnedSample)
	f.Module("net").Ref = "v1.1.0"
	f.Module("net").Commit = commitB
	f.Module("store").Tag = ""
	out, err := lockfile.Patch([]byte(pinnedSample), "x", f)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		`ref    = "v1.0.0"`, `ref    = "v1.1.0"`,
		`commit = "`+commitA+`"`, `commit = "`+commitB+`"`,
		"  tag    = \"1.0.0_build\"\n", "",
	).Replace(pinnedSample)
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A ref added to a block that had none.
	src := strings.Replace(pinnedSample, "  ref    = \"v1.0.0\"\n", "", 1)
	out, err = lockfile.Patch([]byte(src), "x", mustParse(t, pinnedSample))
	if err != nil {
		t.Fatal(err)
	}
	g := mustParse(t, string(out))
	if m := g.Module("net"); m.Ref != "v1.0.0" {
		t.Errorf("patched-in ref = %q:\n%s", m.Ref, out)
	}
}

func TestChangesModuleRef(t *testing.T) {
	old := mustParse(t, pinnedSample)
	edited := old.Clone()
	edited.Module("net").Ref = "v1.1.0"
	edited.Module("net").Commit = commitB
	edited.Module("net").Hashes = []hash.Hash{h1B}
	c := lockfile.Changes(old, edited)
	if len(c) != 1 || c[0].Kind != lockfile.Repinned {
		t.Fatalf("Changes = %v, want one repinned module", c)
	}
	want := `module "net": repinned: ref v1.0.0 -> v1.1.0, commit ` + commitA + ` -> ` + commitB + ` (1 hash added, 1 removed)`
	if got := c[0].String(); got != want {
		t.Errorf("String:\n got %s\nwant %s", got, want)
	}
	if c[0].OldPin.Ref != "v1.0.0" || c[0].NewPin.Ref != "v1.1.0" {
		t.Errorf("pins: %+v -> %+v", c[0].OldPin, c[0].NewPin)
	}
	if lockfile.EqualIgnoringHashes(old, edited) {
		t.Error("EqualIgnoringHashes ignores an edited ref")
	}

	// Only a tag edit, same digest: still repinned.
	tagged := old.Clone()
	tagged.Module("store").Tag = "stable"
	c = lockfile.Changes(old, tagged)
	if len(c) != 1 || c[0].String() != `module "store": repinned: tag 1.0.0_build -> stable` {
		t.Errorf("Changes = %v", c)
	}
	// A versioned module whose lock gains a commit.
	v := lockfile.New()
	v.SetModule(&lockfile.ModuleLock{Path: "n", Source: "git::https://git.example.test/n.git", Version: versions.MustParse("1.0.0")})
	w := v.Clone()
	w.Module("n").Commit = commitA
	if c := lockfile.Changes(v, w); len(c) != 1 || c[0].String() != `module "n": repinned at 1.0.0: commit (none) -> `+commitA {
		t.Errorf("Changes = %v", c)
	}
}

// TestSubdirBindsTheDirectory checks the "subdir" argument: a location
// naming another subdirectory of the same package (same hashes) is a
// repinned module, Patch writes it, and a lock without it reads as the
// package root.
func TestSubdirBindsTheDirectory(t *testing.T) {
	const src = "module \"app\" {\n  version = \"1.0.0\"\n  source  = \"registry.example.test/acme/app/aws\"\n  subdir  = \"modules/good\"\n  hashes = [\n    \"" + string(h1A) + "\",\n  ]\n}\n"
	old := mustParse(t, src)
	if got := old.Module("app").Subdir; got != "modules/good" {
		t.Fatalf("Subdir = %q", got)
	}
	evil := old.Clone()
	evil.Module("app").Subdir = "modules/evil"
	c := lockfile.Changes(old, evil)
	if len(c) != 1 || c[0].Kind != lockfile.Repinned || c[0].String() != `module "app": repinned at 1.0.0: subdir modules/good -> modules/evil` {
		t.Fatalf("Changes = %v", c)
	}
	if lockfile.EqualIgnoringHashes(old, evil) {
		t.Error("EqualIgnoringHashes ignores another subdirectory")
	}
	out, err := lockfile.Patch([]byte(src), "x", evil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `subdir  = "modules/evil"`) {
		t.Errorf("patched:\n%s", out)
	}
	root := old.Clone()
	root.Module("app").Subdir = ""
	out, err = lockfile.Patch([]byte(src), "x", root)
	if err != nil {
		t.Fatal(err)
	}
	if g := mustParse(t, string(out)); g.Module("app").Subdir != "" || strings.Contains(string(out), "subdir") {
		t.Errorf("patched to the root:\n%s", out)
	}
	if c := lockfile.Changes(root, old); len(c) != 1 || c[0].String() != `module "app": repinned at 1.0.0: subdir (none) -> modules/good` {
		t.Errorf("an old lock (no subdir) against one that records it: %v", c)
	}
}
