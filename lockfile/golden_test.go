package lockfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// readGolden reads a txtar golden pair: the files "in" and "want".
func readGolden(t *testing.T, path string) (in, want []byte) {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		switch f.Name {
		case "in":
			in = f.Data
		case "want":
			want = f.Data
		}
	}
	if in == nil || want == nil {
		t.Fatalf("%s: needs files \"in\" and \"want\"", path)
	}
	return in, want
}

// TestGolden parses each testdata/golden/*.txtar "in" file and checks that
// the canonical writer gives "want". A "lenient" line in the archive
// comment parses leniently; "crlf" converts the input to CRLF line endings
// first. The output must itself parse and be a fixed point.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in, want := readGolden(t, path)
			comment := string(ar.Comment)
			if strings.Contains(comment, "crlf") {
				in = bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
			}
			opts := ParseOptions{Lenient: strings.Contains(comment, "lenient")}
			f, err := opts.Parse(in, "in")
			if err != nil {
				t.Fatal(err)
			}
			got := f.Bytes()
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			f2, err := opts.Parse(got, "want")
			if err != nil {
				t.Fatalf("output does not parse: %v", err)
			}
			if again := f2.Bytes(); !bytes.Equal(again, got) {
				t.Errorf("output is not a fixed point:\n%s", cmp.Diff(string(got), string(again)))
			}
		})
	}
}

// TestFixtures checks testdata/*.hcl: the diagnostics must match the inline
// "# ERROR:" and "# WARNING:" comments. Files named lenient-*.hcl are
// parsed leniently; files named crlf-*.hcl are converted to CRLF first.
func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.hcl"))
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := inlineExpectations(src)
			if strings.HasPrefix(name, "crlf-") {
				src = bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n"))
			}
			opts := ParseOptions{Lenient: strings.HasPrefix(name, "lenient-")}
			f, err := opts.Parse(src, name)
			hasErr := false
			for _, w := range want {
				hasErr = hasErr || w.Severity == "error"
			}
			if hasErr != (err != nil) {
				t.Fatalf("error = %v, want an error: %v", err, hasErr)
			}
			var got []diagKey
			for _, d := range diagsOf(err, f) {
				got = append(got, keyOf(d))
				if d.Summary == "" || d.Detail == "" || d.Subject == nil {
					t.Errorf("incomplete diagnostic %#v", d)
				}
			}
			if diff := cmp.Diff(sortKeys(want), sortKeys(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
