package interop

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
)

// managedTF calls the git module, and with oci the OCI module, each
// constrained by a "# tflock: version" comment, with the ref and tag as
// written before tflock runs.
func (w *world) managedTF(netRef string, oci bool) string {
	s := `# Constraints in comments: tofu and terraform read them as comments.
module "network" {
  # tflock: version = "~> 1.0"
  source = "` + installtest.Network + `?ref=` + netRef + `"
}
`
	if oci {
		s += fmt.Sprintf(`
module "storage" {
  # tflock: version = "1.0.0"
  source = "oci://%s/modules/storage"
  name   = "demo"
}
`, w.ociHost)
	}
	return s
}

// rfcTF is the module-locking RFC's form of managedTF: a version argument
// on a git source, which stock tofu and terraform refuse.
const rfcTF = `module "network" {
  source  = "` + installtest.Network + `"
  version = "~> 1.0"
}
`

// checkoutCommit is the commit of the git checkout a tool installed for
// a call.
func (w *world) checkoutCommit(call string) string {
	w.t.Helper()
	out, err := exec.CommandContext(context.Background(), "git", "-C", w.path(".terraform/modules/"+call), "rev-parse", "HEAD").CombinedOutput()
	if err != nil {
		w.t.Fatalf("git rev-parse in the %s checkout: %v\n%s", call, err, out)
	}
	return strings.TrimSpace(string(out))
}

// managedInterop: the RFC form fails to load in the tool; tflock rewrites
// the annotated calls' ref and tag to the locked versions; the tool then
// keeps tflock's install, and on an empty install directory loads, inits
// and validates the rewritten configuration and checks out exactly the
// locked commit. A re-run of tflock changes nothing.
func managedInterop(t *testing.T, name, bin string, w *world, oci bool) {
	w.config(map[string]string{"main.tf": rfcTF})
	if out := w.run(1, bin, "init", "-input=false", "-no-color"); !strings.Contains(out, `"version"`) {
		t.Errorf("%s init on the RFC form: want the version argument refused:\n%s", name, out)
	}

	w.config(map[string]string{"main.tf": w.managedTF("v1.0.0", oci)})
	out := w.tflock(0)
	if !strings.Contains(out, `Rewrote the source of module "network"`) {
		t.Errorf("tflock output does not report the rewrite:\n%s", out)
	}
	cfg := string(w.read("main.tf"))
	want := strings.Replace(w.managedTF("v1.1.0", oci), "/modules/storage\"", "/modules/storage?tag=1.0.0\"", 1)
	if cfg != want {
		t.Fatalf("main.tf after tflock:\n%s\nwant:\n%s", cfg, want)
	}
	lf := parseLock(t, w.read(".terraform.lock.hcl"))
	ml := lf.Module("network")
	if ml == nil || ml.Version.String() != "1.1.0" || ml.Commit == "" {
		t.Fatalf("network lock = %+v, want 1.1.0 with a commit", ml)
	}
	if again := w.tflock(0); !strings.Contains(again, "No changes to ") || strings.Contains(again, "Rewrote") || string(w.read("main.tf")) != cfg {
		t.Errorf("tflock re-run changed something:\n%s", again)
	}
	calls := []string{"network"}
	if oci {
		calls = append(calls, "storage")
	}
	w.initKeeps(name, bin, calls...)
	w.run(0, bin, "validate", "-no-color")

	// An empty install directory: the tool installs the locked commit.
	if err := os.RemoveAll(w.path(".terraform")); err != nil {
		t.Fatal(err)
	}
	w.run(0, bin, "init", "-input=false", "-no-color")
	if got := w.checkoutCommit("network"); got != ml.Commit {
		t.Errorf("%s checked out %s, the lock records %s", name, got, ml.Commit)
	}
	if got := string(w.read(".terraform/modules/network/main.tf")); !strings.Contains(got, `"1.1.0"`) {
		t.Errorf("%s installed network:\n%s", name, got)
	}
	if oci {
		if got := string(w.read(".terraform/modules/storage/main.tf")); !strings.Contains(got, "# storage 1.0.0") {
			t.Errorf("%s installed storage:\n%s", name, got)
		}
	}
	w.run(0, bin, "validate", "-no-color")
	if string(w.read("main.tf")) != cfg {
		t.Errorf("%s changed main.tf", name)
	}
}

// TestInteropManagedRefsTofu: issue 13 item 7 with tofu (git and OCI).
func TestInteropManagedRefsTofu(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	managedInterop(t, "tofu", tofu, newWorld(t), true)
}

// TestInteropManagedRefsTerraform: issue 13 item 7 with terraform (git:
// terraform has no OCI module source).
func TestInteropManagedRefsTerraform(t *testing.T) {
	terraform := tool(t, "TFLOCK_TERRAFORM", "terraform")
	managedInterop(t, "terraform", terraform, newTerraformWorld(t), false)
}

// TestInteropRefWithSubdirTofu: a subdirectory after the ref
// ("?ref=v1.0.0//sub") stays in the ref for go-getter, which reads a
// subdirectory only before the query; tofu accepts the address and fails
// to install it, and tflock refuses it, both with "invalid ref", whether
// or not the call is annotated (issue 23 item 2).
func TestInteropRefWithSubdirTofu(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	const want = `invalid ref: "v1.0.0//sub"`
	for _, annotation := range []string{"", "  # tflock: version = \"~> 1.0\"\n"} {
		w.config(map[string]string{"main.tf": "module \"network\" {\n" + annotation + "  source = \"" + installtest.Network + "?ref=v1.0.0//sub\"\n}\n"})
		if out := w.run(1, tofu, "init", "-input=false", "-no-color"); !strings.Contains(out, want) {
			t.Errorf("tofu init: want %q:\n%s", want, out)
		}
		if out := w.tflock(1); !strings.Contains(out, want) {
			t.Errorf("tflock: want %q:\n%s", want, out)
		}
		if got := string(w.read("main.tf")); !strings.Contains(got, "?ref=v1.0.0//sub\"") {
			t.Errorf("main.tf was rewritten:\n%s", got)
		}
	}
}

// TestInteropRewriteCorpusTofu: each configuration of the rewrite corpus
// (resolve/install/testdata/rewrite-corpus: annotations in many
// positions, CRLF and LF, a block on one line, a .tofu file, JSON, a
// local module) is locked by tflock; tofu then inits it from an empty
// install directory and checks out, for every git call, exactly the
// commit the lock records: the rewritten files are what tofu reads
// (issue 23).
func TestInteropRewriteCorpusTofu(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	corpus := filepath.Join("..", "..", "resolve", "install", "testdata", "rewrite-corpus")
	entries, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			w := newWorld(t)
			files := map[string]string{}
			err := filepath.WalkDir(filepath.Join(corpus, e.Name()), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(filepath.Join(corpus, e.Name()), p)
				// The world's OCI registry has a host of its own.
				files[rel] = strings.ReplaceAll(string(b), "oci://"+installtest.OCIHost+"/", "oci://"+w.ociHost+"/")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			w.config(files)
			w.tflock(0)
			lf := parseLock(t, w.read(".terraform.lock.hcl"))
			if err := os.RemoveAll(w.path(".terraform")); err != nil {
				t.Fatal(err)
			}
			w.run(0, tofu, "init", "-input=false", "-no-color")
			n := 0
			for ml := range lf.Modules() {
				if ml.Commit == "" || ml.Version.IsZero() {
					continue
				}
				n++
				// tofu copies a package it downloaded already for another
				// call, without its .git: the module's text names its
				// version.
				if _, err := os.Stat(w.path(".terraform/modules/" + ml.Path + "/.git")); err == nil {
					if got := w.checkoutCommit(ml.Path); got != ml.Commit {
						t.Errorf("tofu checked out %s for module %q, the lock records %s", got, ml.Path, ml.Commit)
					}
				}
				if got := string(w.read(".terraform/modules/" + ml.Path + "/main.tf")); !strings.Contains(got, `"`+ml.Version.String()+`"`) {
					t.Errorf("tofu installed for module %q, locked at %s:\n%s", ml.Path, ml.Version, got)
				}
			}
			if n == 0 {
				t.Error("no git module locked")
			}
		})
	}
}
