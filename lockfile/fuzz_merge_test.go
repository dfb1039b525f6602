package lockfile

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/tools/txtar"
)

// FuzzMerge parses two lock files and checks what Merge promises: the
// providers and header of the result are those of the rewritten file, its
// module locks are those of the rewritten file plus those of the previous
// file it lacks, neither input is changed, the result writes and parses
// back to itself, and merging again changes nothing.
func FuzzMerge(f *testing.F) {
	goldens, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	var ins [][]byte
	for _, path := range goldens {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "in" {
				ins = append(ins, file.Data)
			}
		}
	}
	// The case Merge exists for: tofu rewrote the file without its module
	// locks.
	f.Add([]byte("provider \"registry.example.test/hashicorp/null\" {\n  version = \"3.2.0\"\n}\n"), []byte(
		"provider \"registry.example.test/hashicorp/null\" {\n  version = \"3.1.0\"\n}\n\n"+
			"module \"app\" {\n  source = \"oci://example.com/modules/app\"\n  version = \"1.0.0\"\n"+
			"  digest = \"sha256:40335019c11e5bdb3780301da5197cbc756b4b5ac3d699c52583f1d34e963176\"\n}\n"))
	for i := range ins {
		f.Add(ins[i], ins[(i+1)%len(ins)])
	}
	f.Fuzz(func(t *testing.T, src1, src2 []byte) {
		opts := ParseOptions{Lenient: true}
		rewritten, err1 := opts.Parse(src1, "rewritten.hcl")
		previous, err2 := opts.Parse(src2, "previous.hcl")
		if err1 != nil || err2 != nil {
			return
		}
		before1, before2 := rewritten.Bytes(), previous.Bytes()
		m := Merge(rewritten, previous)
		if !bytes.Equal(rewritten.Bytes(), before1) || !bytes.Equal(previous.Bytes(), before2) {
			t.Fatal("Merge changed an input")
		}
		if m.header != rewritten.header {
			t.Errorf("header %q, want the rewritten file's %q", m.header, rewritten.header)
		}
		if len(m.providers) != len(rewritten.providers) {
			t.Errorf("%d provider locks, want the rewritten file's %d", len(m.providers), len(rewritten.providers))
		}
		for p := range rewritten.Providers() {
			if q := m.Provider(p.Addr); !reflect.DeepEqual(p, q) {
				t.Errorf("provider %s: %+v, want the rewritten file's %+v", p.Addr, q, p)
			}
		}
		for mod := range m.Modules() {
			want := rewritten.Module(mod.Path)
			if want == nil {
				want = previous.Module(mod.Path)
			}
			if !reflect.DeepEqual(mod, want) {
				t.Errorf("module %q: %+v, want %+v", mod.Path, mod, want)
			}
		}
		for _, f := range []*File{rewritten, previous} {
			for mod := range f.Modules() {
				if m.Module(mod.Path) == nil {
					t.Errorf("module %q is lost", mod.Path)
				}
			}
		}
		out := m.Bytes()
		again, err := opts.Parse(out, "merged.hcl")
		if err != nil {
			t.Fatalf("merged file does not parse: %v\n%s", err, out)
		}
		if !sameFile(m, again) {
			t.Fatalf("merged file does not read back: %v\n%s", Changes(m, again), out)
		}
		if m2 := Merge(m, previous); !sameFile(m, m2) {
			t.Errorf("merging twice changes the result: %v", Changes(m, m2))
		}
		if !sameFile(Merge(rewritten, nil), rewritten) {
			t.Errorf("merging with nothing changes the file")
		}
	})
}
