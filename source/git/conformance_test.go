package git_test

import (
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/sourcetest"
)

func TestConformance(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "mod.git"))
	base := serveHTTP(t, root)
	for name, src := range map[string]string{"file": "git::" + f.repo.fileURL(), "http": "git::" + base + "/mod.git"} {
		t.Run(name, func(t *testing.T) {
			s := git.NewSource(git.Options{CacheDir: t.TempDir()})
			sourcetest.Run(t, s, sourcetest.Cases{
				Known: []source.Package{
					source.ModulePackage{Source: src, Version: mustVersion(t, "1.0.0")},
					source.ModulePackage{Source: src, Version: mustVersion(t, "1.1.0")},
					source.ModulePackage{Source: src, Ref: "main"},
				},
				MissingVersion: source.ModulePackage{Source: src, Version: mustVersion(t, "9.9.9")},
				Concurrency:    4,
			})
		})
	}
}
