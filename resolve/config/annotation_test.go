package config_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
	"github.com/tflock/tflock/source"
)

func readOne(t *testing.T, src string) (*config.Module, string) {
	t.Helper()
	m, diags := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(src)}}, "", config.ReadOptions{})
	var errs []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d.Error())
		}
	}
	return m, strings.Join(errs, "\n")
}

// A "# tflock: version" comment gives a git or OCI call a constraint and
// makes its ref or tag tflock's: the requirement is the constrained,
// listed one, without a Ref.
func TestAnnotationConstrainsGitAndOCI(t *testing.T) {
	src := `module "net" {
  # tflock: version = "~> 1.0"
  source = "git::https://git.example.test/acme/net.git?ref=v1.0.0"
}

module "store" {
  source = "oci://oci.example.test/modules/store?tag=1.0.0" // tflock: version = ">= 1.0.0, < 2.0.0"
}

module "plain" {
  # an ordinary comment
  source = "git::https://git.example.test/acme/net.git?ref=v1.0.0"
}
`
	m, errs := readOne(t, src)
	if errs != "" {
		t.Fatal(errs)
	}
	byCall := map[string]resolve.Requirement{}
	for _, q := range m.Requirements {
		byCall[q.Call] = q
	}
	for _, c := range m.Calls {
		want := c.Name != "plain"
		if c.ManagedRef != want || c.HasVersion != want {
			t.Errorf("%s: ManagedRef %v HasVersion %v, want %v", c.Name, c.ManagedRef, c.HasVersion, want)
		}
	}
	net := byCall["net"]
	if p := net.Package.(source.ModulePackage); p.Ref != "" || net.Constraints.String() != "~> 1.0" || net.Origin.Range.Start.Line != 2 {
		t.Errorf("net = %+v (package %+v), want constraint ~> 1.0 from line 2 and no ref", net, p)
	}
	if !resolve.ModuleCallListed([]resolve.Requirement{net}) || !resolve.ModuleCallListed([]resolve.Requirement{byCall["store"]}) {
		t.Error("annotated calls are not listed")
	}
	if p := byCall["plain"].Package.(source.ModulePackage); p.Ref != "v1.0.0" || resolve.ModuleCallListed([]resolve.Requirement{byCall["plain"]}) {
		t.Errorf("plain = %+v, want pinned to v1.0.0", p)
	}
}

func TestAnnotationErrors(t *testing.T) {
	for _, tc := range []struct{ name, block, want string }{
		{"bad constraint", `  # tflock: version = "~> banana"
  source = "git::https://h.example.test/x.git"`, `main.tf:2,3-`},
		{"unknown key", `  # tflock: versions = "1.0.0"
  source = "git::https://h.example.test/x.git"`, "not a tflock annotation"},
		{"registry", `  # tflock: version = "1.0.0"
  source = "acme/net/aws"`, "only to git and OCI"},
		{"both", `  # tflock: version = "1.0.0"
  source = "git::https://h.example.test/x.git"
  version = "1.0.0"`, "both a version argument"},
		{"digest", `  # tflock: version = "1.0.0"
  source = "oci://h.example.test/x?digest=sha256:` + strings.Repeat("a", 64) + `"`, "pinned by the digest"},
		{"not literal", `  # tflock: version = "1.0.0"
  source = "git::https://h.example.test/${"x"}.git"`, "plain quoted string"},
		{"twice", `  # tflock: version = "1.0.0"
  # tflock: version = "1.1.0"
  source = "git::https://h.example.test/x.git"`, "main.tf:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := readOne(t, "module \"m\" {\n"+tc.block+"\n}\n")
			if !strings.Contains(errs, tc.want) {
				t.Errorf("errors %q, want %q", errs, tc.want)
			}
		})
	}
}

func TestManagedSource(t *testing.T) {
	for _, tc := range []struct{ in, tag, want string }{
		{"git::https://h.example.test/x.git?ref=v1.0.0", "v1.1.0", "git::https://h.example.test/x.git?ref=v1.1.0"},
		{"git::https://h.example.test/x.git", "v1.1.0", "git::https://h.example.test/x.git?ref=v1.1.0"},
		{"git::https://h.example.test/x.git//sub?depth=1&ref=v1&x=y", "v2.0.0", "git::https://h.example.test/x.git//sub?depth=1&ref=v2.0.0&x=y"},
		{"git::https://h.example.test/x.git?depth=1", "1.0.0", "git::https://h.example.test/x.git?depth=1&ref=1.0.0"},
		{"oci://h.example.test/m/x", "1.1.0", "oci://h.example.test/m/x?tag=1.1.0"},
		{"oci://h.example.test/m/x?tag=1.0.0", "1.1.0_b", "oci://h.example.test/m/x?tag=1.1.0_b"},
		// A bare "?" or a trailing "&" takes the argument without another
		// separator (issue 23 item 5).
		{"git::https://h.example.test/x.git?", "v1.1.0", "git::https://h.example.test/x.git?ref=v1.1.0"},
		{"oci://h.example.test/m/x?", "1.1.0", "oci://h.example.test/m/x?tag=1.1.0"},
		{"git::https://h.example.test/x.git?depth=1&", "v1.1.0", "git::https://h.example.test/x.git?depth=1&ref=v1.1.0"},
	} {
		got, err := config.ManagedSource(tc.in, tc.tag)
		if err != nil || got != tc.want {
			t.Errorf("ManagedSource(%q, %q) = %q, %v; want %q", tc.in, tc.tag, got, err, tc.want)
		}
	}
	if _, err := config.ManagedSource("acme/net/aws", "1.0.0"); err == nil {
		t.Error("a registry source was accepted")
	}
}

// Every annotation comment is either read for its module block or
// reported, with its file and line: in a block written on one line it is
// read; above a block, inside an argument's value, inside another kind of
// block or at the top level it is a warning, and never taken for a
// block's constraint (issue 23 item 1).
func TestAnnotationPositions(t *testing.T) {
	const git = "git::https://h.example.test/x.git?ref=v0.9.0"
	src := `# tflock: version = "9.9.9"
module "oneline" { source = "` + git + `" /* tflock: version = "~> 1.0" */ }
module "before" { /* tflock: version = "~> 2.0" */ source = "` + git + `" }

# tflock: version = "~> 3.0"
module "above" {
  source = "` + git + `"
}

module "nested" {
  source = "` + git + `"
  tags = {
    # tflock: version = "~> 4.0"
    a = "b"
  }
  list = [
    "x", // tflock: version = "~> 5.0"
  ]
}

resource "null_resource" "r" {
  # tflock: version = "~> 6.0"
}
module "after" {
  source = "` + git + `"
} # tflock: version = "~> 7.0"
module "doc" {
  /*
   * tflock: version = "~> 3.0"
   */
  source = "` + git + `"
}
`
	m, diags := config.ReadFiles([]config.File{{Name: "main.tf", Src: []byte(src)}}, "", config.ReadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	managed := map[string]string{}
	for _, c := range m.Calls {
		if c.ManagedRef {
			managed[c.Name] = c.Constraints.String()
		}
	}
	if len(managed) != 3 || managed["oneline"] != "~> 1.0" || managed["before"] != "~> 2.0" || managed["doc"] != "~> 3.0" {
		t.Errorf("managed calls %v, want oneline ~> 1.0, before ~> 2.0, doc ~> 3.0", managed)
	}
	var warnings []string
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning && d.Summary == "Ignored tflock annotation" {
			warnings = append(warnings, fmt.Sprintf("%s:%02d %s", d.Subject.Filename, d.Subject.Start.Line, d.Detail))
		}
	}
	slices.Sort(warnings)
	for i, want := range []string{
		`main.tf:01 The comment "# tflock: version = \"9.9.9\"" is above module block "oneline", outside its braces`,
		`main.tf:05 The comment "# tflock: version = \"~> 3.0\"" is above module block "above", outside its braces`,
		`main.tf:13 The comment "# tflock: version = \"~> 4.0\"" is inside the argument "tags" of module block "nested"`,
		`main.tf:17 The comment "// tflock: version = \"~> 5.0\"" is inside the argument "list" of module block "nested"`,
		`main.tf:22 The comment "# tflock: version = \"~> 6.0\"" is inside a "resource" block`,
		`main.tf:26 The comment "# tflock: version = \"~> 7.0\"" is outside any module block`,
	} {
		if i >= len(warnings) || !strings.HasPrefix(warnings[i], want) {
			t.Errorf("warning %d: want %q, got\n%s", i, want, strings.Join(warnings, "\n"))
		}
	}
	if len(warnings) != 6 {
		t.Errorf("%d warnings, want 6:\n%s", len(warnings), strings.Join(warnings, "\n"))
	}
}

// TestConstraintSyntaxErrorInTofuWords checks that a malformed version
// constraint is reported as OpenTofu reports it ("Invalid version
// constraint", "This string does not use correct version constraint
// syntax"), naming the string and what it constrains, for providers
// (object and legacy string forms) and modules.
func TestConstraintSyntaxErrorInTofuWords(t *testing.T) {
	for name, src := range map[string]string{
		"provider": `terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 1.0 2.0" }
  }
}
`,
		"legacy provider": `terraform {
  required_providers {
    aws = "~> 1.0 2.0"
  }
}
`,
		"module": `module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 1.0 2.0"
}
`,
	} {
		_, errs := readOne(t, src)
		for _, want := range []string{"Invalid version constraint", `This string does not use correct version constraint syntax: "~> 1.0 2.0"`} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s: errors %q; want %q", name, errs, want)
			}
		}
	}
}
