package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = "testdata/sample.terraform.lock.hcl"

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSampleIsCanonical(t *testing.T) {
	want, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "", sample)
	if code != 0 || out != string(want) || errs != "" {
		t.Fatalf("code %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	if code, _, errs := runCmd(t, "", "-check", sample); code != 0 {
		t.Errorf("-check on the canonical sample: %d %s", code, errs)
	}
	// Standard input.
	if code, out, _ := runCmd(t, string(want), "-"); code != 0 || out != string(want) {
		t.Errorf("stdin: %d\n%s", code, out)
	}
}

func TestNonCanonical(t *testing.T) {
	want, _ := os.ReadFile(sample)
	// Licence comment and reversed blocks: valid, not canonical.
	parts := strings.SplitN(string(want), "\n\n", 4)
	messy := "# Licence text\n" + parts[0] + "\n\n" + parts[2] + "\n\n" + parts[1] + "\n\n" + parts[3]
	path := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	if err := os.WriteFile(path, []byte(messy), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCmd(t, "", "-check", path); code != 1 || !strings.Contains(errs, "not in canonical form") {
		t.Errorf("-check: %d %q", code, errs)
	}
	if code, out, _ := runCmd(t, "", path); code != 0 || out != string(want) {
		t.Errorf("stdout form: %d\n%s", code, out)
	}
	// The licence comment is dropped, and -w says so, naming its line.
	if code, out, errs := runCmd(t, "", "-w", path); code != 0 || out != "" || !strings.Contains(errs, "drops the comments of "+path+" at line 1 ") {
		t.Fatalf("-w: %d %q %q; want a note on the dropped comment", code, out, errs)
	}
	got, _ := os.ReadFile(path)
	if string(got) != string(want) {
		t.Errorf("-w wrote:\n%s", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("-w changed the mode to %v", st.Mode())
	}
	if code, _, _ := runCmd(t, "", "-check", path); code != 0 {
		t.Error("-check after -w failed")
	}
}

func TestInvalidShowsDiagnostics(t *testing.T) {
	src := "provider \"hashicorp/aws\" {\n  version = \"5.0.0\"\n}\n\n" +
		"provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"3.2\"\n}\n"
	code, out, errs := runCmd(t, src, "-")
	if code != 1 || out != "" {
		t.Fatalf("code %d, stdout %q", code, out)
	}
	for _, want := range []string{
		"Error: Non-normalized provider source address",
		"<stdin> line 1",
		`provider "hashicorp/aws" {`, // the source snippet
		"Error: Invalid provider version number",
		"<stdin> line 6",
		`normalized form: "3.2.0"`,
		`"registry.opentofu.org/hashicorp/aws"`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"a", "b"}, {"-w", "-check", sample}, {"-w", "-"}, {"-nope", sample}} {
		if code, _, _ := runCmd(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code, _, errs := runCmd(t, "", filepath.Join(t.TempDir(), "missing")); code != 1 || errs == "" {
		t.Errorf("missing file: %d %q", code, errs)
	}
}

func TestCheckStdinAndLenient(t *testing.T) {
	want, _ := os.ReadFile(sample)
	if code, out, errs := runCmd(t, "# licence\n"+string(want), "-check", "-"); code != 1 || out != "" || !strings.Contains(errs, "<stdin> is not in canonical form") {
		t.Errorf("-check - on a non-canonical file: %d %q %q", code, out, errs)
	}
	if code, _, errs := runCmd(t, string(want), "-check", "-"); code != 0 || errs != "" {
		t.Errorf("-check - on the canonical sample: %d %q", code, errs)
	}
	src := "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"3.2.0\"\n  future = 1\n}\n"
	code, _, errs := runCmd(t, src, "-")
	if code != 1 || !strings.Contains(errs, "Error: Unsupported argument") || !strings.Contains(errs, "   3:   future = 1") {
		t.Errorf("strict: %d %q", code, errs)
	}
	code, out, errs := runCmd(t, src, "-lenient", "-")
	if code != 0 || !strings.Contains(errs, "Warning: Unsupported argument") || !strings.Contains(out, "  future  = 1\n") {
		t.Errorf("lenient: %d %q\n%s", code, errs, out)
	}
}

func TestMergeConflictDiagnostics(t *testing.T) {
	src := "provider \"registry.opentofu.org/hashicorp/null\" {\n<<<<<<< ours\n  version = \"3.2.0\"\n=======\n  version = \"3.2.1\"\n>>>>>>> theirs\n}\n"
	code, out, errs := runCmd(t, src, "-")
	if code != 1 || out != "" || strings.Count(errs, "Error: Unresolved merge conflict") != 3 || !strings.Contains(errs, "   2: <<<<<<< ours") {
		t.Errorf("%d %q\n%s", code, out, errs)
	}
}
