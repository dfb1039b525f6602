package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunModules(t *testing.T) {
	var out bytes.Buffer
	run(&out, false, []string{
		"./a/../b",
		"hashicorp/consul/aws//sub",
		"github.com/org/repo//mod?ref=v1.0.0",
		"oci://example.com/repo?tag=a&digest=sha256:" + strings.Repeat("0", 64),
		"git::",
	})
	want := []string{
		"./a/../b\tlocal\t./b\t\t\t",
		"hashicorp/consul/aws//sub\tregistry\tregistry.opentofu.org/hashicorp/consul/aws//sub\tregistry.opentofu.org/hashicorp/consul/aws\tsub\t",
		"github.com/org/repo//mod?ref=v1.0.0\tremote\tgit::https://github.com/org/repo.git//mod?ref=v1.0.0\tgit::https://github.com/org/repo.git\tmod\t",
		"oci://example.com/repo?tag=a&digest=sha256:" + strings.Repeat("0", 64) + "\terror\t\t\t\t" +
			`invalid module source "oci://example.com/repo?tag=a&digest=sha256:` + strings.Repeat("0", 64) + `": cannot set both "tag" and "digest" arguments`,
		"git::\terror\t\t\t\t" + `invalid module source "git::": the "git::" prefix must be followed by a URL`,
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
	for _, line := range got {
		if n := strings.Count(line, "\t"); n != 5 {
			t.Errorf("line %q has %d tabs, want 5 (six fields)", line, n)
		}
	}
}

func TestRunProviders(t *testing.T) {
	var out bytes.Buffer
	run(&out, true, []string{"hashicorp/aws", "terraform.io/builtin/terraform", "-/aws", "example.com/ns/x", "aws", "my_org/aws"})
	want := []string{
		"hashicorp/aws\tprovider\tregistry.opentofu.org/hashicorp/aws\thashicorp/aws\t",
		"terraform.io/builtin/terraform\tbuiltin\tterraform.io/builtin/terraform\tterraform.io/builtin/terraform\t",
		"-/aws\tlegacy\tregistry.opentofu.org/-/aws\t-/aws\t",
		"example.com/ns/x\tprovider\texample.com/ns/x\texample.com/ns/x\t",
		// A bare type is in the "hashicorp" namespace, as in OpenTofu.
		"aws\tprovider\tregistry.opentofu.org/hashicorp/aws\thashicorp/aws\t",
		"my_org/aws\terror\t\t\t" + `invalid provider source "my_org/aws": Invalid provider namespace: Invalid provider namespace "my_org" in source "my_org/aws": must contain only letters, digits, and dashes, and may not use leading or trailing dashes.`,
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
}

// TestRunProvidersBuiltIn: issue 21 item 3. The addresses OpenTofu 1.12.6's
// parser marks built-in (its registry-address library's IsBuiltIn: the
// namespace "builtin" on terraform.io or opentofu.org, any type, any
// spelling of the host) print as built-in; a bare "terraform" source, or
// the namespace "builtin" elsewhere, is an ordinary provider, as there.
func TestRunProvidersBuiltIn(t *testing.T) {
	var out bytes.Buffer
	run(&out, true, []string{"terraform.io/builtin/null", "opentofu.org/builtin/terraform", "OpenTofu.ORG/builtin/terraform", "terraform", "builtin/terraform", "example.com/builtin/terraform"})
	want := []string{
		"terraform.io/builtin/null\tbuiltin\tterraform.io/builtin/null\tterraform.io/builtin/null\t",
		"opentofu.org/builtin/terraform\tbuiltin\topentofu.org/builtin/terraform\topentofu.org/builtin/terraform\t",
		"OpenTofu.ORG/builtin/terraform\tbuiltin\topentofu.org/builtin/terraform\topentofu.org/builtin/terraform\t",
		"terraform\tprovider\tregistry.opentofu.org/hashicorp/terraform\thashicorp/terraform\t",
		"builtin/terraform\tprovider\tregistry.opentofu.org/builtin/terraform\tbuiltin/terraform\t",
		"example.com/builtin/terraform\tprovider\texample.com/builtin/terraform\texample.com/builtin/terraform\t",
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
}

// TestMain runs the program itself when asked, so that the command line
// (flags, exit status) is tested too.
func TestMain(m *testing.M) {
	if os.Getenv("SOURCES_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-provider", "hashicorp/aws")
	cmd.Env = append(os.Environ(), "SOURCES_RUN_MAIN=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "hashicorp/aws\tprovider\tregistry.opentofu.org/hashicorp/aws\thashicorp/aws\t\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	cmd = exec.Command(exe)
	cmd.Env = append(os.Environ(), "SOURCES_RUN_MAIN=1")
	if err := cmd.Run(); err == nil {
		t.Error("no arguments: want a non-zero exit status")
	}
}

// TestHeader: -header names the columns on a first line, as many as the
// rows have; without it the output has no header (scripts read it as is).
func TestHeader(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-header", "hashicorp/consul/aws"}, {"-provider", "-header", "hashicorp/aws"}} {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "SOURCES_RUN_MAIN=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "input\tkind\tcanonical\t") || strings.Count(lines[0], "\t") != strings.Count(lines[1], "\t") {
			t.Errorf("%v: output %q; want a header naming each column, then the row", args, out)
		}
	}
}
