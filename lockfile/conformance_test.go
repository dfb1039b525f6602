package lockfile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/tflock/tflock/internal/testdir"
)

// TestConformanceLockfiles parses every real lock file and writes it back:
// the bytes must be identical, or equal to NNN.want.hcl where given.
func TestConformanceLockfiles(t *testing.T) {
	dir := testdir.Conformance(t, "lockfiles")
	files, err := filepath.Glob(filepath.Join(dir, "*.terraform.lock.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no lock files in %s (%v)", dir, err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := src
			if w, err := os.ReadFile(strings.TrimSuffix(path, ".terraform.lock.hcl") + ".want.hcl"); err == nil {
				want = w
			}
			f := parseForRoundTrip(t, src, name)
			if got := f.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("canonical output differs (-want +got):\n%s", cmp.Diff(string(want), string(got)))
			}
		})
	}
}

// parseForRoundTrip parses src strictly. Files that hold malformed h1:/zh:
// values (which OpenTofu accepts and strict parsing rejects) must fail with
// exactly one "Invalid provider hash string" error per such value; they
// are then parsed leniently.
func parseForRoundTrip(t *testing.T, src []byte, name string) *File {
	t.Helper()
	f, err := Parse(src, name)
	if err == nil {
		if w := f.Warnings(); len(w) != 0 {
			t.Errorf("unexpected warnings: %v", w)
		}
		return f
	}
	pe, ok := err.(*ParseError)
	if !ok {
		t.Fatalf("Parse error %T is not a *ParseError: %v", err, err)
	}
	wantBad := malformedHashLines(src)
	var gotBad []int
	for _, d := range pe.Diagnostics {
		if d.Summary != "Invalid provider hash string" {
			t.Fatalf("strict parse: %v", err)
		}
		gotBad = append(gotBad, d.Subject.Start.Line)
	}
	if !slices.Equal(gotBad, wantBad) {
		t.Fatalf("malformed hashes reported on lines %v, want %v", gotBad, wantBad)
	}
	f, err = ParseOptions{Lenient: true}.Parse(src, name)
	if err != nil {
		t.Fatalf("lenient parse: %v", err)
	}
	if len(f.Warnings()) != len(wantBad) {
		t.Errorf("lenient parse gave %d warnings, want %d", len(f.Warnings()), len(wantBad))
	}
	return f
}

// malformedHashLines finds hash strings whose h1:/zh: value has the wrong
// shape, by the definitions of the two schemes (base64 of 32 bytes; 64
// lower-case hex digits).
func malformedHashLines(src []byte) []int {
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		for _, field := range strings.Split(sc.Text(), `"`) {
			switch {
			case strings.HasPrefix(field, "h1:") && (len(field) != 3+44 || !strings.HasSuffix(field, "=")):
				lines = append(lines, n)
			case strings.HasPrefix(field, "zh:") && len(field) != 3+64:
				lines = append(lines, n)
			}
		}
	}
	return lines
}

// TestConformanceOpenTofuLockFiles checks the lock files of OpenTofu's own
// tests and tofu's real output. A file that already has one of the two
// standard headers must come back byte for byte. Otherwise OpenTofu's
// writer replaces everything before the first block with its header and a
// blank line, and keeps the (already canonical) blocks.
func TestConformanceOpenTofuLockFiles(t *testing.T) {
	root := testdir.OpenTofu(t)
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".terraform.lock.hcl") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) < 8 {
		t.Fatalf("found %d lock files under %s (%v)", len(files), root, err)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := src
			if strings.Contains(rel, "with-bad-lock-file") {
				// Its hash list is not laid out canonically, so tofu's
				// output differs from the input: the golden pair has it.
				in, out := readGolden(t, filepath.Join("testdata", "golden", "tofu-bad-lock-file.txtar"))
				if !bytes.Equal(in, src) {
					t.Fatal("golden input is not a copy of the fixture")
				}
				want = out
			} else if !bytes.HasPrefix(src, []byte(tofuHeaderLine+"\n"+headerSecondLine+"\n")) &&
				!bytes.HasPrefix(src, []byte(terraformHeaderLine+"\n"+headerSecondLine+"\n")) {
				i := bytes.Index(src, []byte("\nprovider \""))
				if i < 0 {
					t.Fatal("no provider block")
				}
				want = append([]byte(tofuHeaderLine+"\n"+headerSecondLine+"\n\n"), src[i+1:]...)
			}
			f := parseForRoundTrip(t, src, rel)
			if got := f.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("canonical output differs (-want +got):\n%s", cmp.Diff(string(want), string(got)))
			}
		})
	}
}

// diagKey identifies a diagnostic for comparison with a fixture.
type diagKey struct {
	Severity string
	Summary  string
	Line     int
}

func keyOf(d *hcl.Diagnostic) diagKey {
	sev := "error"
	if d.Severity == hcl.DiagWarning {
		sev = "warning"
	}
	line := 0
	if d.Subject != nil {
		line = d.Subject.Start.Line
	}
	return diagKey{sev, d.Summary, line}
}

// inlineExpectations reads the "# ERROR: <summary>" and
// "# WARNING: <summary>" comments of a fixture.
func inlineExpectations(src []byte) []diagKey {
	var want []diagKey
	for n, line := range strings.Split(string(src), "\n") {
		for _, sev := range []string{"ERROR", "WARNING"} {
			if _, after, ok := strings.Cut(line, "# "+sev+": "); ok {
				want = append(want, diagKey{strings.ToLower(sev), strings.TrimSpace(after), n + 1})
			}
		}
	}
	return want
}

func sortKeys(ks []diagKey) []diagKey {
	slices.SortFunc(ks, func(a, b diagKey) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Severity+a.Summary, b.Severity+b.Summary)
	})
	return slices.Compact(ks)
}

func diagsOf(err error, f *File) hcl.Diagnostics {
	if pe, ok := err.(*ParseError); ok {
		return pe.Diagnostics
	}
	if f != nil {
		return f.Warnings()
	}
	return nil
}

// TestOpenTofuFixtures runs OpenTofu's parser fixtures: the diagnostics
// must match the inline "# ERROR:" comments and what tofu 1.12 reports
// (summary and source range), where tofu's two diagnostics for one bad
// version are one here.
func TestOpenTofuFixtures(t *testing.T) {
	conf := testdir.Conformance(t)
	dir := filepath.Join(conf, "opentofu", "internal", "depsfile", "testdata", "locks-files")
	tsv, err := os.ReadFile(filepath.Join(conf, "opentofu", "derived", "locks-files.tofu-diagnostics.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	tofu := map[string][]string{}        // file -> "summary@range"
	tofuDetails := map[string][]string{} // file and "summary@range" -> details
	for _, line := range strings.Split(strings.TrimSpace(string(tsv)), "\n")[1:] {
		cols := strings.Split(line, "\t")
		if len(cols) < 6 || cols[2] == "" {
			continue
		}
		tofu[cols[0]] = append(tofu[cols[0]], cols[3]+"@"+cols[5])
		k := cols[0] + " " + cols[3] + "@" + cols[5]
		tofuDetails[k] = append(tofuDetails[k], cols[4])
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.hcl"))
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(src, ".terraform.lock.hcl")
			diags := diagsOf(err, f)
			if want := inlineExpectations(src); len(want) == 0 && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var got, want []diagKey
			var gotRanges []string
			for _, d := range diags {
				got = append(got, keyOf(d))
				gotRanges = append(gotRanges, fmt.Sprintf("%s@%d:%d-%d:%d", d.Summary,
					d.Subject.Start.Line, d.Subject.Start.Column, d.Subject.End.Line, d.Subject.End.Column))
			}
			want = inlineExpectations(src)
			checkInline(t, want, got)
			wantRanges := slices.Compact(slices.Sorted(slices.Values(tofu[name])))
			if diff := cmp.Diff(wantRanges, slices.Sorted(slices.Values(gotRanges))); diff != "" {
				t.Errorf("diagnostics differ from tofu 1.12 (-tofu +got):\n%s", diff)
			}
			for i, d := range diags {
				if d.Summary == "" || d.Detail == "" || d.Subject == nil {
					t.Errorf("incomplete diagnostic %#v", d)
				}
				// Tofu's detail, then (where ours says more) what to do.
				// Versions are exempt: tofu gives two details for one
				// fault, and the text of its version library.
				if d.Summary == "Invalid provider version number" {
					continue
				}
				details := tofuDetails[name+" "+gotRanges[i]]
				if !slices.ContainsFunc(details, func(td string) bool { return strings.HasPrefix(d.Detail, td) }) {
					t.Errorf("%s: detail %q does not start with tofu's %q", gotRanges[i], d.Detail, details)
				}
			}
		})
	}
}

// checkInline compares diagnostics with a fixture's inline comments: every
// line with a diagnostic has a comment, and every comment's summary is
// reported on its line (OpenTofu's fixtures mark each faulty line once,
// although a line can have two faults).
func checkInline(t *testing.T, want, got []diagKey) {
	t.Helper()
	lines := func(ks []diagKey) []int {
		var ls []int
		for _, k := range ks {
			ls = append(ls, k.Line)
		}
		slices.Sort(ls)
		return slices.Compact(ls)
	}
	if diff := cmp.Diff(lines(want), lines(got)); diff != "" {
		t.Errorf("lines with diagnostics differ from the inline comments (-want +got):\n%s\ngot: %v", diff, got)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %s %q on line %d; got %v", w.Severity, w.Summary, w.Line, got)
		}
	}
}
