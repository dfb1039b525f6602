package gittest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/assemble"
	"github.com/tflock/tflock/source/git"
	"github.com/tflock/tflock/source/git/gittest"
)

// A downstream test locks a configuration whose module lives in a git
// repository with tags: the repository is served over smart HTTP as
// git.example.test, its commits are the same on every run, and so is the
// lock file, which the test can compare with an expected one. (In a test,
// gittest.New(t, ...) also closes the server at the end.)
func ExampleStart() {
	srv, err := gittest.Start(gittest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	repo, err := srv.Repo("acme/network",
		gittest.Commit{Files: map[string]string{"main.tf": "# network 1.0.0\n"}, Tags: []string{"v1.0.0"}},
		gittest.Commit{Files: map[string]string{"main.tf": "# network 1.1.0\n"}, Tags: []string{"v1.1.0"}},
	)
	if err != nil {
		log.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "gittest-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	config := `module "network" {
  source  = "` + repo.Source() + `"
  version = "~> 1.0"
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		log.Fatal(err)
	}
	res, err := install.Init(context.Background(), install.Options{
		Dir:           dir,
		Source:        &assemble.Dispatch{Git: git.NewSource(srv.SourceOptions())},
		ProvidersLock: true,
		Platform:      source.Platform{OS: "linux", Arch: "amd64"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(res.Lock.Bytes()))
	// Output:
	// # This file is maintained automatically by "tofu init".
	// # Manual edits may be lost in future updates.
	//
	// module "network" {
	//   version     = "1.1.0"
	//   source      = "git::https://git.example.test/acme/network.git"
	//   constraints = "~> 1.0"
	//   commit      = "a4b0ec00ed180a17b00ebd44bed45872e69e239b"
	//   hashes = [
	//     "h1:EOOMi1LwflwoPqEICglm3D41LNauR9By1hmkEB33exs=",
	//   ]
	// }
}
