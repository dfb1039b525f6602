package lockfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve/versions"
)

const goodLock = `provider "registry.example.test/hashicorp/null" {
  version = "3.2.0"
}
`

// deepValues are ~130 KB values nested 65,000 levels deep, each of which
// overflowed the stack inside the HCL parser (a fatal error, not a panic).
var deepValues = map[string]string{
	"brackets": strings.Repeat("[", 65000) + strings.Repeat("]", 65000),
	"braces":   strings.Repeat("{a=", 65000) + "1" + strings.Repeat("}", 65000),
	"parens":   strings.Repeat("(", 65000) + "1" + strings.Repeat(")", 65000),
}

// deepLock is a lock file whose line 5 holds a deep value.
func deepLock(value string) []byte {
	return []byte(goodLock + "\nx = " + value + "\n")
}

// checkDeep checks that err is a *lockfile.ParseError holding the nesting
// diagnostic at line 5 of file.
func checkDeep(t *testing.T, err error, file string) {
	t.Helper()
	var pe *lockfile.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *lockfile.ParseError", err, err)
	}
	if len(pe.Diagnostics) != 1 || pe.Diagnostics[0].Summary != hclguard.Summary {
		t.Fatalf("diagnostics %v, want the nesting one", pe.Diagnostics)
	}
	if s := pe.Diagnostics[0].Subject; s == nil || s.Filename != file || s.Start.Line != 5 {
		t.Fatalf("subject %v, want %s line 5", s, file)
	}
	if !strings.Contains(err.Error(), file+":5") {
		t.Errorf("message %q does not name the file and line", err)
	}
}

// TestDeepNestingParse is the regression test for issue 11 item 8: deeply
// nested lock files crashed Parse, ParseFile and Patch. Each now returns a
// diagnostic naming the file and line; and the same path parses again once
// the file is fixed.
func TestDeepNestingParse(t *testing.T) {
	for name, value := range deepValues {
		t.Run(name, func(t *testing.T) {
			src := deepLock(value)
			for _, opts := range []lockfile.ParseOptions{{}, {Lenient: true}} {
				_, err := opts.Parse(src, ".terraform.lock.hcl")
				checkDeep(t, err, ".terraform.lock.hcl")
			}
			path := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
			if err := os.WriteFile(path, src, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := lockfile.ParseFile(path)
			checkDeep(t, err, path)

			_, err = lockfile.Patch(src, ".terraform.lock.hcl", lockfile.New())
			checkDeep(t, err, ".terraform.lock.hcl")

			// Fixed, the same file parses.
			if err := os.WriteFile(path, []byte(goodLock), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := lockfile.ParseFile(path)
			if err != nil || f.Provider(tfaddr.MustParseProviderSource("registry.example.test/hashicorp/null")) == nil {
				t.Fatalf("after the fix: %v", err)
			}
		})
	}
}

// TestDeepUnknownNotWritten checks the writer: an unknown argument whose
// text nests too deeply (set through the API; a parse never keeps one) is
// left out of the output instead of crashing the HCL parser that reads it
// back, and the rest of the file is written.
func TestDeepUnknownNotWritten(t *testing.T) {
	f := lockfile.New()
	addr := tfaddr.MustParseProviderSource("registry.example.test/hashicorp/null")
	f.SetProvider(&lockfile.ProviderLock{Addr: addr, Version: versions.MustParse("3.2.0"), Unknown: []lockfile.Unknown{
		{Name: "deep", Text: deepValues["brackets"]},
		{Name: "kept", Text: `"yes"`},
	}})
	out := string(f.Bytes())
	if strings.Contains(out, "deep") || !regexp.MustCompile(`kept +=`).MatchString(out) || !strings.Contains(out, `version = "3.2.0"`) {
		t.Fatalf("output:\n%s", out)
	}
}
