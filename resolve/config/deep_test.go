package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/resolve/config"
)

// TestDeepNesting is the regression test for issue 11 item 8 in the
// configuration reader: a .tf or .tf.json file nested 65,000 levels deep
// crashed ReadModule. Now the file gets a diagnostic naming it and the
// line, the other files of the module are still read, and once the file
// is fixed the next read of the directory succeeds.
func TestDeepNesting(t *testing.T) {
	const n = 65000
	main := "terraform {\n  required_providers {\n    null = { source = \"hashicorp/null\" }\n  }\n}\n"
	for name, c := range map[string]struct{ file, src string }{
		"brackets":       {"deep.tf", "locals {\n  ok = 1\n  x = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n}\n"},
		"braces":         {"deep.tf", "locals {\n  ok = 1\n  x = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n}\n"},
		"parens":         {"deep.tf", "locals {\n  ok = 1\n  x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n}\n"},
		"json-arrays":    {"deep.tf.json", "{\"locals\": {\n  \"ok\": 1,\n  \"x\": " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n}}\n"},
		"json-objects":   {"deep.tf.json", "{\"locals\": {\n  \"ok\": 1,\n  \"x\": " + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + "\n}}\n"},
		"json-templates": {"deep.tf.json", "{\"locals\": {\n  \"ok\": 1,\n  \"x\": \"" + strings.Repeat("${(", n/2) + "1" + strings.Repeat(")}", n/2) + "\"\n}}\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(file, src string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("main.tf", main)
			write(c.file, c.src)
			m, diags := config.ReadModule(dir, "", config.ReadOptions{})
			var found *hcl.Diagnostic
			for _, d := range diags {
				if d.Summary == hclguard.Summary {
					found = d
				}
			}
			if found == nil || found.Severity != hcl.DiagError || found.Subject == nil ||
				filepath.Base(found.Subject.Filename) != c.file || found.Subject.Start.Line != 3 {
				t.Fatalf("diagnostics %v, want a nesting error at %s line 3", diags, c.file)
			}
			if m == nil || len(m.Providers) != 1 {
				t.Fatalf("the other file was not read: %+v", m)
			}
			write(c.file, fixed(c.file))
			if _, diags := config.ReadModule(dir, "", config.ReadOptions{}); diags.HasErrors() {
				t.Fatalf("after the fix: %v", diags)
			}
		})
	}
}

// fixed is a harmless version of the deep file.
func fixed(file string) string {
	if strings.HasSuffix(file, ".json") {
		return "{\"locals\": {\"ok\": 1, \"x\": [[1]]}}\n"
	}
	return "locals {\n  ok = 1\n  x = [[1]]\n}\n"
}
