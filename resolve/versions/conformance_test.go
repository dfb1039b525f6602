package versions_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tflock/tflock/internal/testdir"
	"github.com/tflock/tflock/resolve/versions"
)

type tsvRow struct {
	line       int
	constraint string
	version    string
	cols       []string
}

func readTSV(t *testing.T, name string) []tsvRow {
	t.Helper()
	f, err := os.Open(testdir.Conformance(t, "constraints", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []tsvRow
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		if n == 1 || sc.Text() == "" {
			continue // header
		}
		cols := strings.Split(sc.Text(), "\t")
		var c string
		if err := json.Unmarshal([]byte(cols[0]), &c); err != nil {
			t.Fatalf("%s:%d: constraint column: %v", name, n, err)
		}
		rows = append(rows, tsvRow{line: n, constraint: c, version: cols[1], cols: cols})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 100 {
		t.Fatalf("%s: only %d rows", name, len(rows))
	}
	return rows
}

func TestConformanceProviders(t *testing.T) {
	for _, r := range readTSV(t, "providers.tsv") {
		c, err := versions.ParseConstraints(r.constraint)
		if r.version == "*" {
			want := strings.TrimPrefix(r.cols[2], "parse-error: ")
			if err == nil {
				t.Errorf("providers.tsv:%d: ParseConstraints(%q) = %q, want error %q", r.line, r.constraint, c, want)
				continue
			}
			if strings.HasPrefix(want, "PANIC") {
				continue // the peer panicked; any error will do
			}
			if err.Error() != want {
				t.Errorf("providers.tsv:%d: ParseConstraints(%q) error\n got: %s\nwant: %s", r.line, r.constraint, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("providers.tsv:%d: ParseConstraints(%q): %v", r.line, r.constraint, err)
			continue
		}
		v := versions.MustParse(r.version)
		want := r.cols[2] == "true"
		if got := c.Allows(v); got != want {
			t.Errorf("providers.tsv:%d: %q allows %s = %v, want %v", r.line, r.constraint, v, got, want)
		}
		// The canonical form must mean the same.
		c2, err := versions.ParseConstraints(c.String())
		if err != nil {
			t.Errorf("providers.tsv:%d: reparse of %q: %v", r.line, c.String(), err)
		} else if c2.Allows(v) != want {
			t.Errorf("providers.tsv:%d: canonical %q allows %s = %v, want %v", r.line, c.String(), v, !want, want)
		}
	}
}

func TestConformanceModules(t *testing.T) {
	for _, r := range readTSV(t, "modules.tsv") {
		want := r.cols[4] // tflock_module
		c, err := versions.ParseModuleConstraints(r.constraint)
		if want == "error" {
			if err == nil {
				t.Errorf("modules.tsv:%d: ParseModuleConstraints(%q) = %q, want error", r.line, r.constraint, c)
				continue
			}
			if exp, ok := strings.CutPrefix(r.cols[2], "parse-error: "); ok && err.Error() != exp {
				t.Errorf("modules.tsv:%d: ParseModuleConstraints(%q) error\n got: %s\nwant: %s", r.line, r.constraint, err, exp)
			}
			continue
		}
		if err != nil {
			t.Errorf("modules.tsv:%d: ParseModuleConstraints(%q): %v", r.line, r.constraint, err)
			continue
		}
		v, err := versions.ParseModuleVersion(r.version)
		if err != nil {
			t.Errorf("modules.tsv:%d: ParseModuleVersion(%q): %v", r.line, r.version, err)
			continue
		}
		if got := c.Allows(v); got != (want == "true") {
			t.Errorf("modules.tsv:%d: %q allows %s = %v, want %s", r.line, r.constraint, r.version, got, want)
		}
		c2, err := versions.ParseModuleConstraints(c.String())
		if err != nil {
			t.Errorf("modules.tsv:%d: reparse of %q: %v", r.line, c.String(), err)
		} else if c2.Allows(v) != (want == "true") {
			t.Errorf("modules.tsv:%d: canonical %q disagrees for %s", r.line, c.String(), r.version)
		}
	}
}

// TestLockFileConstraintsAreCanonical checks that every `constraints`
// value in the real lock files is a fixed point of ParseConstraints+String:
// OpenTofu and Terraform write them in the canonical form.
func TestLockFileConstraintsAreCanonical(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdir.Conformance(t, "lockfiles"), "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s*constraints\s*=\s*("(?:[^"\\]|\\.)*")`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			var s string
			if err := json.Unmarshal(m[1], &s); err != nil {
				t.Fatalf("%s: %s: %v", filepath.Base(f), m[1], err)
			}
			n++
			c, err := versions.ParseConstraints(s)
			if err != nil {
				t.Errorf("%s: ParseConstraints(%q): %v", filepath.Base(f), s, err)
				continue
			}
			if got := c.String(); got != s {
				t.Errorf("%s: constraints %q is written back as %q", filepath.Base(f), s, got)
			}
		}
	}
	if n < 40 {
		t.Fatalf("found only %d constraints attributes", n)
	}
}
