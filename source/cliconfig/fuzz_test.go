package cliconfig_test

import (
	"context"
	"testing"

	"github.com/tflock/tflock/source/cliconfig"
	"github.com/tflock/tflock/source/mirror"
)

// FuzzParse checks that no input makes the parser or the source builder
// panic, and that a configuration without errors builds.
func FuzzParse(f *testing.F) {
	f.Add([]byte("provider_installation {\n  direct {}\n}\n"), false)
	f.Add([]byte(`{"provider_installation": {"direct": {}}}`), true)
	f.Fuzz(func(t *testing.T, src []byte, isJSON bool) {
		name := "fuzz.tfrc"
		if isJSON {
			name += ".json"
		}
		cfg, diags := cliconfig.Parse(src, name)
		if cfg == nil {
			t.Fatal("nil config")
		}
		for _, d := range diags {
			_ = d.Error()
		}
		if diags.HasErrors() {
			return
		}
		// Building must not panic either (no constructors: only mirrors).
		// The implied directories are confined to the package directory.
		inst, _ := cfg.Sources(context.Background(), cliconfig.SourceOptions{
			Implied: mirror.ImpliedDirsEnv{GOOS: "windows", Getenv: func(string) string { return "" }},
		})
		if inst == nil || inst.Source == nil {
			t.Fatal("no installation built")
		}
	})
}
