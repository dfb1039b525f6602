package cliconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/internal/hclguard"
	"github.com/tflock/tflock/source/cliconfig"
)

// deepValues are ~130 KB values nested 65,000 levels deep (native syntax
// and JSON), each of which overflowed the stack inside the HCL parser.
var deepValues = map[string]struct{ native, json string }{
	"brackets": {strings.Repeat("[", 65000) + strings.Repeat("]", 65000), strings.Repeat("[", 65000) + strings.Repeat("]", 65000)},
	"braces":   {strings.Repeat("{a=", 65000) + "1" + strings.Repeat("}", 65000), strings.Repeat(`{"a":`, 65000) + "1" + strings.Repeat("}", 65000)},
	"parens":   {strings.Repeat("(", 65000) + "1" + strings.Repeat(")", 65000), `"` + strings.Repeat("${(", 32500) + "1" + strings.Repeat(")}", 32500) + `"`},
}

// nestingAt checks that diags hold the nesting error at line of file.
func nestingAt(t *testing.T, diags hcl.Diagnostics, file string, line int) {
	t.Helper()
	for _, d := range diags {
		if d.Summary == hclguard.Summary {
			if d.Severity != hcl.DiagError || d.Subject == nil || d.Subject.Filename != file || d.Subject.Start.Line != line {
				t.Fatalf("diagnostic %v, want an error at %s line %d", d, file, line)
			}
			return
		}
	}
	t.Fatalf("diagnostics %v hold no %q error", diags, hclguard.Summary)
}

// TestDeepNesting is the regression test for issue 11 item 8 in the CLI
// configuration: deeply nested .tfrc and .tfrc.json files crashed Parse
// and Load; now each gives a diagnostic naming the file and line, and the
// next Load, the file fixed, reads it.
func TestDeepNesting(t *testing.T) {
	for name, v := range deepValues {
		t.Run(name, func(t *testing.T) {
			native := "plugin_cache_dir = \"/tmp/x\"\n\nx = " + v.native + "\n"
			_, diags := cliconfig.Parse([]byte(native), "deep.tfrc")
			nestingAt(t, diags, "deep.tfrc", 3)
			json := "{\n  \"plugin_cache_dir\": \"/tmp/x\",\n  \"x\": " + v.json + "\n}\n"
			_, diags = cliconfig.Parse([]byte(json), "deep.tfrc.json")
			nestingAt(t, diags, "deep.tfrc.json", 3)

			file := filepath.Join(t.TempDir(), "deep.tfrc")
			if err := os.WriteFile(file, []byte(native), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := cliconfig.LoadOptions{
				Getenv:  func(k string) string { return map[string]string{"TF_CLI_CONFIG_FILE": file}[k] },
				HomeDir: func() (string, error) { return t.TempDir(), nil },
			}
			_, diags = cliconfig.Load(opts)
			nestingAt(t, diags, file, 3)
			if err := os.WriteFile(file, []byte("plugin_cache_dir = \"/tmp/x\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := cliconfig.Load(opts)
			if diags.HasErrors() || cfg.PluginCacheDir != "/tmp/x" {
				t.Fatalf("after the fix: %v, %+v", diags, cfg)
			}
		})
	}
}

// TestDeepRepositoryTemplate checks the second parse of an oci_mirror
// repository_template: escaped in the file ("$${"), its value is a
// template nested deeper than the limit (65,000 levels crashed the
// template parser; this test stays a little above the limit, since the
// HCL parser takes time quadratic in the number of escapes).
func TestDeepRepositoryTemplate(t *testing.T) {
	n := 2 * hclguard.MaxDepth
	value := strings.Repeat("$${", n) + "type" + strings.Repeat("}", n)
	src := "provider_installation {\n  oci_mirror {\n    repository_template = \"" + value + "\"\n  }\n}\n"
	_, diags := cliconfig.Parse([]byte(src), "oci.tfrc")
	nestingAt(t, diags, "oci.tfrc", 3)
}
