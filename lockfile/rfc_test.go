package lockfile_test

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

// The module blocks of OpenTofu's module-locking RFC pull requests (see
// testdata/rfc/README.md).
const (
	rfc4071 = `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
}

# Kept by Patch.
module "foo.bar.baz" { # the path to the "module" block
  source  = "git::https://example.com/foo.git//subdir"
  package = "git::https://example.com/foo.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
  ]
}

module "vpc" {
  source      = "terraform-aws-modules/vpc/aws"
  constraints = "~> 1.0.0"
  package     = "registry::registry.opentofu.org/terraform-aws-modules/vpc/aws@1.0.4"
  hashes      = ["h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU="]
}

module "archive" {
  source   = "https://example.com/package.tar.gz//subdir"
  floating = true
}
`
	rfc3540 = `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
}

module "registry.opentofu.org/terraform-aws-modules/vpc/aws" {
  version     = "3.19.0"
  constraints = ">= 3.0.0"

  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
  ]
}

module "registry.opentofu.org/terraform-aws-modules/vpc/aws:5.1.0" {
  constraints = "~> 5.0"
  hashes      = ["h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU="]
}

module "example.com/acme/unused/aws" {
  version = "1.0.0"
}
`
)

const vpcSource = "registry.opentofu.org/terraform-aws-modules/vpc/aws"

func rfcWarnings(f *lockfile.File) int {
	n := 0
	for _, d := range f.Warnings() {
		if d.Summary == "Module lock in RFC form" {
			n++
		}
	}
	return n
}

// TestRFC4071Mapping checks each argument of PR #4071's form against the
// model, and that writing converts the file to tflock's form, which reads
// back the same with no RFC warning.
func TestRFC4071Mapping(t *testing.T) {
	f := mustParse(t, rfc4071)
	if n := rfcWarnings(f); n != 3 {
		t.Errorf("%d RFC-form warnings, want 3: %v", n, f.Warnings())
	}
	want := map[string]lockfile.ModuleLock{
		"foo.bar.baz": {Path: "foo.bar.baz", Source: "git::https://example.com/foo.git//subdir", Commit: "5632352e8042c13b2da684ad5895525f2aeb0f98", Hashes: []hash.Hash{h1A}},
		"vpc":         {Path: "vpc", Source: vpcSource, Version: versions.MustParse("1.0.4"), Constraints: "~> 1.0.0", Hashes: []hash.Hash{h1B}},
		"archive":     {Path: "archive", Source: "https://example.com/package.tar.gz//subdir"},
	}
	for m := range f.Modules() {
		if diff := cmp.Diff(want[m.Path], *m, cmp.Comparer(func(a, b versions.Version) bool { return a == b }), cmpopts.IgnoreUnexported(lockfile.ModuleLock{})); diff != "" {
			t.Errorf("module %q (-want +got):\n%s", m.Path, diff)
		}
		delete(want, m.Path)
	}
	if len(want) != 0 {
		t.Errorf("modules not read: %v", want)
	}
	out := f.Bytes()
	if regexp.MustCompile(`(?m)^\s*(package|floating)\s*=`).Match(out) {
		t.Errorf("the writer kept an RFC argument:\n%s", out)
	}
	again := mustParse(t, string(out))
	if !lockfile.Equal(f, again) {
		t.Errorf("converted file reads differently: %v", lockfile.Changes(f, again))
	}
	if n := rfcWarnings(again); n != 0 {
		t.Errorf("converted file still has %d RFC-form blocks:\n%s", n, out)
	}
}

// TestRFCSourceWithCredentials: a source written with a password or an
// sshkey gives a lock source without them; nothing secret is written.
func TestRFCSourceWithCredentials(t *testing.T) {
	const secret = "s3cr3t"
	key := "c2VjcmV0LWtleQ==" // "secret-key"
	src := `module "a" {
  source  = "git::https://user:` + secret + `@example.com/a.git?ref=v1.0.0"
  package = "git::https://user:` + secret + `@example.com/a.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
}
module "b" {
  source  = "git::ssh://git@example.com/b.git?sshkey=` + key + `"
  package = "git::ssh://git@example.com/b.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98&sshkey=` + key + `"
}
module "c" {
  source  = "git::https://user:` + secret + `@example.com/a.git"
  package = "git::https://user:` + secret + `@example.com/other.git?ref=5632352e8042c13b2da684ad5895525f2aeb0f98"
}
`
	f, err := lockfile.Parse([]byte(src), "creds.hcl")
	var pe *lockfile.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("want a parse error for module c, got %v", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error shows the password: %v", err)
	}
	for _, d := range pe.Diagnostics {
		if strings.Contains(d.Detail, secret) || strings.Contains(d.Detail, key) {
			t.Errorf("diagnostic shows a credential: %s", d.Detail)
		}
	}
	if a := f.Module("a"); a == nil || a.Source != "git::https://example.com/a.git" || a.Ref != "v1.0.0" {
		t.Errorf("module a = %+v", a)
	}
	if b := f.Module("b"); b == nil || b.Source != "git::ssh://git@example.com/b.git" {
		t.Errorf("module b = %+v", b)
	}
	if out := string(f.Bytes()); strings.Contains(out, secret) || strings.Contains(out, key) {
		t.Errorf("written lock holds a credential:\n%s", out)
	}
}

// TestRFCStrictVsLenient: a block valid in an RFC form that the model
// cannot hold is an error when strict; lenient parsing keeps it whole, the
// writer writes it back, and the result reads the same again.
func TestRFCStrictVsLenient(t *testing.T) {
	src, err := os.ReadFile("testdata/lenient-rfc.hcl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockfile.Parse(src, "lenient-rfc.hcl")
	var pe *lockfile.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("strict parse: got %v, want a *ParseError", err)
	}
	unsupported := 0
	for _, d := range pe.Diagnostics {
		if d.Summary == "Unsupported module lock" && d.Severity == hcl.DiagError {
			unsupported++
		}
	}
	if unsupported != 2 {
		t.Errorf("strict parse: %d \"Unsupported module lock\" errors, want 2: %v", unsupported, err)
	}

	lenient := lockfile.ParseOptions{Lenient: true}
	f, err := lenient.Parse(src, "lenient-rfc.hcl")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, u := range f.Unknown() {
		if u.Block {
			kept = append(kept, strings.SplitN(u.Text, "\n", 2)[0])
		}
	}
	if want := []string{`module "delegated" {`, `module "hg" {`}; !slices.Equal(kept, want) {
		t.Errorf("kept blocks %q, want %q", kept, want)
	}
	if f.Module("delegated") != nil || f.Module("app") == nil {
		t.Errorf("delegated = %v, app = %v", f.Module("delegated"), f.Module("app"))
	}
	out := f.Bytes()
	again, err := lenient.Parse(out, "out.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if !lockfile.Equal(f, again) || !slices.Equal(f.Unknown(), again.Unknown()) {
		t.Errorf("lenient round trip differs:\n%s", out)
	}
	if out2 := again.Bytes(); string(out2) != string(out) {
		t.Errorf("not a fixed point:\n%s", cmp.Diff(string(out), string(out2)))
	}
	// Patch keeps the blocks it cannot read as they are.
	patched, err := lockfile.Patch(src, "lenient-rfc.hcl", f)
	if err != nil {
		t.Fatal(err)
	}
	if string(patched) != string(src) {
		t.Errorf("Patch changed an unchanged file:\n%s", cmp.Diff(string(src), string(patched)))
	}
}

// TestBindModules gives the locks keyed by source (PR #3540) to calls, and
// checks the sequence parse, bind, write, parse again.
func TestBindModules(t *testing.T) {
	f := mustParse(t, rfc3540)
	if n := rfcWarnings(f); n != 3 {
		t.Errorf("%d RFC-form warnings, want 3", n)
	}
	var got []string
	for m := range f.SourceModules() {
		got = append(got, m.Source+" "+m.Version.String()+" "+m.Constraints)
	}
	want := []string{
		"example.com/acme/unused/aws 1.0.0 ",
		vpcSource + " 3.19.0 >= 3.0.0",
		vpcSource + " 5.1.0 ~> 5.0",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("SourceModules = %q, want %q", got, want)
	}
	if len(slices.Collect(f.Modules())) != 0 {
		t.Fatal("locks keyed by source are not call locks")
	}
	// A call that already has its own lock keeps it.
	f.SetModule(&lockfile.ModuleLock{Path: "own", Source: vpcSource, Version: versions.MustParse("4.0.0")})

	calls := []lockfile.ModuleCall{
		// Allows both versions; 3.19.0 was recorded under its constraints.
		{Path: "same", Source: vpcSource, Constraints: mustConstraints(t, ">= 3.0.0")},
		// Allows both; none recorded under its constraints: the newest.
		{Path: "newest", Source: vpcSource, Constraints: mustConstraints(t, ">= 1.0.0")},
		{Path: "five", Source: vpcSource, Constraints: mustConstraints(t, "~> 5.1")},
		{Path: "none", Source: vpcSource, Constraints: mustConstraints(t, "~> 6.0")},
		{Path: "other", Source: "example.com/acme/other/aws"},
		{Path: "own", Source: vpcSource},
	}
	bound := f.BindModules(calls)
	if want := []string{"same", "newest", "five"}; !slices.Equal(bound, want) {
		t.Errorf("bound %q, want %q", bound, want)
	}
	// A call found later (in a nested module read afterwards) still gets
	// a lock that an earlier call got.
	later := []lockfile.ModuleCall{{Path: "later.vpc", Source: vpcSource, Constraints: mustConstraints(t, "~> 3.0")}}
	if b := f.BindModules(later); !slices.Equal(b, []string{"later.vpc"}) {
		t.Errorf("later bind gave %q", b)
	}
	wantOut := `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
}

module "five" {
  version     = "5.1.0"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = "~> 5.0"
  hashes = [
    "h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=",
  ]
}

module "later.vpc" {
  version     = "3.19.0"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = ">= 3.0.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
  ]
}

module "newest" {
  version     = "5.1.0"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = "~> 5.0"
  hashes = [
    "h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=",
  ]
}

module "own" {
  version = "4.0.0"
  source  = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
}

module "same" {
  version     = "3.19.0"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = ">= 3.0.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "zh:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176",
  ]
}

module "example.com/acme/unused/aws" {
  version = "1.0.0"
}
`
	out := string(f.Bytes())
	if diff := cmp.Diff(wantOut, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	again := mustParse(t, out)
	if !lockfile.Equal(f, again) {
		t.Errorf("written file reads differently: %v", lockfile.Changes(f, again))
	}
	// A second bind finds nothing more to give.
	if b := again.BindModules(calls); len(b) != 0 {
		t.Errorf("second bind gave %q", b)
	}
	if !f.RemoveSourceModule("example.com/acme/unused/aws", versions.MustParse("1.0.0")) || len(slices.Collect(f.SourceModules())) != 0 {
		t.Error("RemoveSourceModule did not remove the last lock keyed by source")
	}
	if lockfile.Equal(f, again) {
		t.Error("Equal ignores locks keyed by source")
	}
}

func mustConstraints(t *testing.T, s string) versions.Constraints {
	t.Helper()
	c, err := versions.ParseModuleConstraints(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPatchRFCForms: Patch keeps an unchanged RFC-form block byte for
// byte, writes a changed one in tflock's form, removes one whose lock is
// gone, and after BindModules replaces the blocks keyed by source by call
// blocks.
func TestPatchRFCForms(t *testing.T) {
	f := mustParse(t, rfc4071)
	same, err := lockfile.Patch([]byte(rfc4071), "test.hcl", f)
	if err != nil {
		t.Fatal(err)
	}
	if string(same) != rfc4071 {
		t.Errorf("Patch changed an unchanged file:\n%s", cmp.Diff(rfc4071, string(same)))
	}

	f.AddModuleHashes("vpc", h1A)
	f.RemoveModule("archive")
	patched, err := lockfile.Patch([]byte(rfc4071), "test.hcl", f)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(rfc4071, `module "vpc" {
  source      = "terraform-aws-modules/vpc/aws"
  constraints = "~> 1.0.0"
  package     = "registry::registry.opentofu.org/terraform-aws-modules/vpc/aws@1.0.4"
  hashes      = ["h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU="]
}

module "archive" {
  source   = "https://example.com/package.tar.gz//subdir"
  floating = true
}
`, `module "vpc" {
  version     = "1.0.4"
  source      = "registry.opentofu.org/terraform-aws-modules/vpc/aws"
  constraints = "~> 1.0.0"
  hashes = [
    "h1:7MjN4eFisdTv4tlhXH5hL4QQd39Jy4baPhFxwAd/EFE=",
    "h1:DvLRiv4Pbjq3Rh0yNWtq+9dwVXqHF+bQspfhckLyFWU=",
  ]
}
`, 1)
	if diff := cmp.Diff(want, string(patched)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if pf := mustParse(t, string(patched)); !lockfile.Equal(f, pf) {
		t.Errorf("patched file reads differently: %v", lockfile.Changes(f, pf))
	}

	// PR #3540's form: unchanged, then bound to calls.
	g := mustParse(t, rfc3540)
	same, err = lockfile.Patch([]byte(rfc3540), "test.hcl", g)
	if err != nil {
		t.Fatal(err)
	}
	if string(same) != rfc3540 {
		t.Errorf("Patch changed an unchanged file:\n%s", cmp.Diff(rfc3540, string(same)))
	}
	g.BindModules([]lockfile.ModuleCall{{Path: "vpc", Source: vpcSource, Constraints: mustConstraints(t, "~> 3.0")}})
	patched, err = lockfile.Patch([]byte(rfc3540), "test.hcl", g)
	if err != nil {
		t.Fatal(err)
	}
	pg := mustParse(t, string(patched))
	if !lockfile.Equal(g, pg) {
		t.Errorf("patched file reads differently: %v\n%s", lockfile.Changes(g, pg), patched)
	}
	if !strings.Contains(string(patched), `module "vpc" {`) || strings.Contains(string(patched), `module "`+vpcSource+`" {`) {
		t.Errorf("the bound lock was not converted:\n%s", patched)
	}
	if !strings.Contains(string(patched), `module "registry.opentofu.org/terraform-aws-modules/vpc/aws:5.1.0" {`) {
		t.Errorf("the lock keyed by source that no call took was not kept as it was:\n%s", patched)
	}
}

// TestMergeKeepsSourceLocks: OpenTofu drops every module block when it
// rewrites the file; Merge restores the locks keyed by source too.
func TestMergeKeepsSourceLocks(t *testing.T) {
	prev := mustParse(t, rfc3540)
	rewritten := mustParse(t, `provider "registry.opentofu.org/hashicorp/null" {
  version = "3.2.0"
}
`)
	m := lockfile.Merge(rewritten, prev)
	if !lockfile.Equal(m, prev) {
		t.Errorf("merged file lost locks: %v", lockfile.Changes(prev, m))
	}
}
