package resolve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/leaktest"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/source"
)

// TestLockSourceWithoutCredentials: a module requirement that names no
// lock source (as an embedder may build it) gets its package address
// without credentials as the source its lock entry records.
func TestLockSourceWithoutCredentials(t *testing.T) {
	token := leaktest.Secret(t, "token")
	key, _ := leaktest.SSHKey(t)
	check := leaktest.New(t, token, key)
	reqs := []resolve.Requirement{{
		Package: source.ModulePackage{Source: "git::https://alice:" + token + "@git.example.test/net.git?sshkey=" + key, Ref: "v1.0.0"},
		Call:    "net",
	}}
	lister := source.ListerFunc(func(ctx context.Context, pkg source.Package) ([]source.Available, error) {
		t.Errorf("a pinned module was listed: %v", pkg.ForDisplay())
		return nil, nil
	})
	sel, err := resolve.Resolve(context.Background(), reqs, lister, resolve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Modules) != 1 {
		t.Fatalf("%d module picks, want 1", len(sel.Modules))
	}
	if got, want := sel.Modules[0].LockSource, "git::https://git.example.test/net.git"; got != want {
		t.Errorf("lock source %q, want %q", got, want)
	}
	var b strings.Builder
	if err := sel.Explain(&b); err != nil {
		t.Fatal(err)
	}
	check.Text("the explanation", b.String())
}
