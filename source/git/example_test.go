package git_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
)

// Example lists the versions of a repository made on the spot, and fetches
// one of them.
func Example() {
	tmp, err := os.MkdirTemp("", "git-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "vpc")
	env := append(testEnv(), "GIT_DIR="+filepath.Join(repo, ".git"), "GIT_WORK_TREE="+repo)
	for _, args := range [][]string{
		{"init", "-q", repo},
		{"commit", "-q", "--allow-empty", "-m", "first"},
		{"tag", "v1.0.0"},
		{"tag", "latest"},
		{"commit", "-q", "--allow-empty", "-m", "second"},
		{"tag", "-a", "-m", "release", "v1.1.0"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Println(err, string(out))
			return
		}
	}

	src := git.NewSource(git.Options{})
	pkg := source.ModulePackage{Source: "git::file://" + filepath.ToSlash(repo)}
	list, err := src.Versions(context.Background(), pkg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range list {
		fmt.Println(a.Version, a.Ref, len(a.Pin))
	}
	pkg.Version = list[len(list)-1].Version
	got, err := src.Fetch(context.Background(), pkg, filepath.Join(tmp, "out"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Pin == list[len(list)-1].Pin, got.Hashes[0].Scheme())
	// Output:
	// 1.0.0 v1.0.0 40
	// 1.1.0 v1.1.0 40
	// true h1:
}
