package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/resolve/config"
)

// FuzzReadFiles feeds arbitrary bytes to the configuration reader as a
// native-syntax file and as a JSON file: it must never panic, and every
// requirement it returns must name a package.
func FuzzReadFiles(f *testing.F) {
	for _, dir := range []string{
		filepath.Join("testdata", "config", "errors"),
		filepath.Join("testdata", "config", "tree"),
		filepath.Join("testdata", "config", "tree", "modules", "app"),
		filepath.Join("testdata", "config", "tree", "modules", "shared"),
	} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			src, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src, filepath.Ext(e.Name()) == ".json")
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, json bool) {
		name := "main.tf"
		if json {
			name = "main.tf.json"
		}
		m, _ := config.ReadFiles([]config.File{{Name: name, Src: src}}, "root", config.ReadOptions{})
		if m == nil {
			t.Fatal("nil module")
		}
		for _, r := range m.Requirements {
			if r.Package == nil {
				t.Fatalf("requirement without a package: %+v", r)
			}
			_ = r.String()
		}
	})
}

// FuzzStateRequirements feeds arbitrary bytes to the state reader: it must
// never panic, and must return requirements or an error.
func FuzzStateRequirements(f *testing.F) {
	for _, name := range []string{"v3.tfstate", "v4.tfstate"} {
		src, err := os.ReadFile(filepath.Join("testdata", "state", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(`{"version": 4, "resources": [{"provider": "provider[\"a/b/c\"]"}]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		reqs, err := config.StateRequirements(src, "s.tfstate")
		if err != nil && reqs != nil {
			t.Fatal("requirements and an error")
		}
	})
}
