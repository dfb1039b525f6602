package oci

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tflock/tflock/source"
)

func TestParseModuleSource(t *testing.T) {
	tests := map[string]struct {
		want    string
		wantErr bool
	}{
		"oci://example.com/org/mod":      {want: "example.com/org/mod"},
		"oci://localhost:5000/mod":       {want: "localhost:5000/mod"},
		"oci://example.com/org/mod:1.0":  {wantErr: true},
		"oci://example.com/org/mod?tag=": {wantErr: true},
		"oci://example.com/org//sub":     {wantErr: true},
		"oci://example.com":              {wantErr: true},
		"oci://Example.com/UPPER":        {wantErr: true},
		"https://example.com/org/mod":    {wantErr: true},
		"":                               {wantErr: true},
	}
	for in, tc := range tests {
		got, err := moduleRepository(source.ModulePackage{Source: in})
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseModuleSource(%q) = %q, %v; want %q, error %v", in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestHelperIdentityToken checks the credential helper protocol's
// "<token>" user name, which stands for an identity (refresh) token.
func TestHelperIdentityToken(t *testing.T) {
	dir := t.TempDir()
	helper := filepath.Join(dir, "docker-credential-tok")
	if err := os.WriteFile(helper, []byte("#!/bin/sh\nread host\nprintf '{\"ServerURL\":\"%s\",\"Username\":\"<token>\",\"Secret\":\"refresh-123\"}' \"$host\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"credHelpers":{"reg.example":"tok"},"auths":{"other.example":{"identitytoken":"idt","registrytoken":"rt"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewSource(Options{ConfigFiles: []string{cfg}, LookPath: func(string) (string, error) { return helper, nil }})
	got, err := s.credential(context.Background(), "reg.example/a/b")
	if err != nil || got != (Credential{IdentityToken: "refresh-123"}) {
		t.Errorf("credential from helper = %+v, %v", got, err)
	}
	got, err = s.credential(context.Background(), "other.example/a")
	if err != nil || got != (Credential{IdentityToken: "idt", AccessToken: "rt"}) {
		t.Errorf("credential from auths = %+v, %v", got, err)
	}
	got, err = s.credential(context.Background(), "third.example/a")
	if err != nil || !got.IsZero() {
		t.Errorf("credential for an unconfigured host = %+v, %v; want anonymous", got, err)
	}
}

func TestMatchSpecificity(t *testing.T) {
	tests := []struct {
		pattern, repo string
		want          int
	}{
		{"host", "host/a/b", 0},
		{"host/a", "host/a/b", 1},
		{"host/a/b", "host/a/b", 2},
		{"host/a/b/c", "host/a/b", -1},
		{"host/ab", "host/a/b", -1},
		{"hos", "host/a", -1},
		{"", "host/a", -1},
	}
	for _, tc := range tests {
		if got := matchSpecificity(tc.pattern, tc.repo); got != tc.want {
			t.Errorf("matchSpecificity(%q, %q) = %d, want %d", tc.pattern, tc.repo, got, tc.want)
		}
	}
}

func FuzzParseModuleSource(f *testing.F) {
	for _, s := range []string{"oci://example.com/org/mod", "oci://localhost:5000/a/b/c", "oci://h/x?tag=1", "oci://", "git::x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		repo, err := moduleRepository(source.ModulePackage{Source: s})
		if err != nil {
			return
		}
		// A valid address round-trips and names a valid repository.
		if "oci://"+repo != s {
			t.Errorf("parseModuleSource(%q) = %q", s, repo)
		}
		if err := checkRepository(repo); err != nil {
			t.Errorf("accepted %q but its repository is invalid: %v", s, err)
		}
	})
}

func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		`{"auths":{"h":{"auth":"YTpi"}}}`,
		`{"auths":{"h/a":{"username":"u","password":"p"}},"credsStore":"x"}`,
		`{"credHelpers":{"h":"x"}}`,
		`{"h":{"auth":"YTpi"}}`,
		`{"auths":`,
	} {
		f.Add(s, "h/a/b")
	}
	f.Fuzz(func(t *testing.T, content, repo string) {
		p := filepath.Join(t.TempDir(), "c.json")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cands, err := readConfigCandidates(p, repo)
		if err != nil {
			return
		}
		for i, c := range cands {
			if i > 0 && c.specificity > cands[i-1].specificity {
				t.Errorf("candidates not sorted by specificity: %+v", cands)
			}
			if c.entry != nil {
				c.entry.credential() // must not panic
			}
		}
	})
}
