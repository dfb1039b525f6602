package git

import (
	"maps"
	"strings"
	"testing"
)

func TestParseRefs(t *testing.T) {
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	out := a + "\tHEAD\n" + a + "\trefs/heads/main\n" + b + "\trefs/tags/v1.0.0\n" + c + "\trefs/tags/v1.0.0^{}\n"
	got, err := parseRefs(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"HEAD": a, "refs/heads/main": a, "refs/tags/v1.0.0": c}
	if !maps.Equal(got, want) {
		t.Errorf("parseRefs = %v, want %v", got, want)
	}
	if _, err := parseRefs("not a line\n"); err == nil {
		t.Error("malformed output accepted")
	}
}

func FuzzParseRefs(f *testing.F) {
	f.Add(strings.Repeat("a", 40) + "\trefs/tags/v1\n" + strings.Repeat("b", 40) + "\trefs/tags/v1^{}\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, out string) {
		refs, err := parseRefs(out)
		if err != nil {
			return
		}
		for name, commit := range refs {
			if !isCommitID(commit) || strings.HasSuffix(name, "^{}") {
				t.Fatalf("bad ref %q -> %q", name, commit)
			}
		}
	})
}
