package oci_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

const (
	user = "alice"
	pass = "s3cret"
)

// writeHelper makes a docker credential helper program in dir: it records
// the server it was asked about in NAME.seen and prints body (a printf
// format receiving the server) with the given exit status.
func writeHelper(t *testing.T, dir, name, body string, status int) string {
	t.Helper()
	p := filepath.Join(dir, "docker-credential-"+name)
	script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = get ] || exit 3\nread host\necho \"$host\" > %q\nprintf '%s' \"$host\"\nexit %d\n", p+".seen", body, status)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCredentials(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{Username: user, Password: pass})
	ctx := context.Background()
	if _, err := ocitest.PushModule(ctx, repoOf(t, s, "mods/net"), mustZip(t, moduleFiles), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	host := s.Host()
	b64 := func(u, p string) string { return base64.StdEncoding.EncodeToString([]byte(u + ":" + p)) }
	good := fmt.Sprintf(`{"auth":%q}`, b64(user, pass))
	bad := fmt.Sprintf(`{"auth":%q}`, b64(user, "wrong"))
	okHelper := `{"ServerURL":"%s","Username":"alice","Secret":"s3cret"}`

	tests := map[string]struct {
		files   []string // config file contents, in search order
		helpers map[string]string
		creds   func(context.Context, string) (oci.Credential, error)
		want    error // nil: success
		seen    string
	}{
		"anonymous by default":         {want: source.ErrUnauthorized},
		"auths base64":                 {files: []string{`{"auths":{"` + host + `":` + good + `}}`}},
		"auths username and password":  {files: []string{`{"auths":{"` + host + `":{"username":"alice","password":"s3cret"}}}`}},
		"auths with scheme key":        {files: []string{`{"auths":{"http://` + host + `/":` + good + `}}`}},
		"wrong password":               {files: []string{`{"auths":{"` + host + `":` + bad + `}}`}, want: source.ErrUnauthorized},
		"repository prefix beats host": {files: []string{`{"auths":{"` + host + `":` + bad + `,"` + host + `/mods":` + good + `}}`}},
		"longest prefix wins":          {files: []string{`{"auths":{"` + host + `/mods":` + good + `,"` + host + `/mods/net":` + bad + `}}`}, want: source.ErrUnauthorized},
		"prefix of another repository": {files: []string{`{"auths":{"` + host + `/mo":` + bad + `,"` + host + `":` + good + `}}`}},
		"earlier file wins":            {files: []string{`{"auths":{"` + host + `":` + bad + `}}`, `{"auths":{"` + host + `":` + good + `}}`}, want: source.ErrUnauthorized},
		"later file more specific":     {files: []string{`{"auths":{"` + host + `":` + bad + `}}`, `{"auths":{"` + host + `/mods/net":` + good + `}}`}},
		"missing file skipped":         {files: []string{"", `{"auths":{"` + host + `":` + good + `}}`}},
		"legacy dockercfg":             {files: []string{`{"` + host + `":` + good + `}`}},
		"credHelpers":                  {files: []string{`{"credHelpers":{"` + host + `":"t1"}}`}, helpers: map[string]string{"t1": okHelper}, seen: host},
		"credHelpers beat auths":       {files: []string{`{"auths":{"` + host + `":` + bad + `},"credHelpers":{"` + host + `":"t1"}}`}, helpers: map[string]string{"t1": okHelper}, seen: host},
		"credsStore":                   {files: []string{`{"credsStore":"store"}`}, helpers: map[string]string{"store": okHelper}, seen: host},
		"credsStore with marker entry": {files: []string{`{"auths":{"` + host + `/mods":{}},"credsStore":"store"}`}, helpers: map[string]string{"store": okHelper}, seen: host},
		"auths beat credsStore":        {files: []string{`{"auths":{"` + host + `":` + good + `},"credsStore":"store"}`}, helpers: map[string]string{"store": `{"Username":"x","Secret":"y"}`}},
		"helper knows nothing":         {files: []string{`{"credsStore":"none"}`}, helpers: map[string]string{"none": "credentials not found in native keychain"}, want: source.ErrUnauthorized},
		"explicit function": {creds: func(_ context.Context, repo string) (oci.Credential, error) {
			return oci.Credential{Username: user, Password: pass}, nil
		}, files: []string{`{"auths":{"` + host + `":` + bad + `}}`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			opts := s.SourceOptions(nil)
			for i, content := range tc.files {
				p := filepath.Join(dir, fmt.Sprintf("config%d.json", i))
				if content != "" {
					if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				opts.ConfigFiles = append(opts.ConfigFiles, p)
			}
			helpers := map[string]string{}
			for h, body := range tc.helpers {
				status := 0
				if strings.Contains(body, "not found") {
					status = 1
				}
				helpers["docker-credential-"+h] = writeHelper(t, dir, h, body, status)
			}
			opts.LookPath = func(file string) (string, error) {
				if p, ok := helpers[file]; ok {
					return p, nil
				}
				return "", fmt.Errorf("%s: not found", file)
			}
			opts.Credentials = tc.creds
			_, err := oci.NewSource(opts).Fetch(ctx, source.ModulePackage{Source: "oci://" + host + "/mods/net", Version: versions.MustParse("1.0.0")}, filepath.Join(dir, "pkg"))
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Fetch error = %v, want %v", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), pass) {
				t.Errorf("error %q reveals the password", err)
			}
			for h := range tc.helpers {
				if tc.seen == "" {
					continue
				}
				got, err := os.ReadFile(filepath.Join(dir, "docker-credential-"+h+".seen"))
				if err != nil || strings.TrimSpace(string(got)) != tc.seen {
					t.Errorf("helper %s was asked about %q (%v), want %q", h, got, err, tc.seen)
				}
			}
		})
	}
}

func TestCredentialErrors(t *testing.T) {
	s := newServer(t, ocitest.ServerOptions{Username: user, Password: pass})
	ctx := context.Background()
	dir := t.TempDir()
	host := s.Host()
	failing := writeHelper(t, dir, "broken", "helper exploded", 2)
	tests := map[string]struct {
		config string
		want   string
	}{
		"malformed file":  {`{"auths":`, "not a valid credentials file"},
		"bad base64":      {`{"auths":{"` + host + `":{"auth":"!!!"}}}`, "not valid base64"},
		"no colon":        {`{"auths":{"` + host + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("justuser")) + `"}}}`, `must encode "username:password"`},
		"failing helper":  {`{"credHelpers":{"` + host + `":"broken"}}`, "helper exploded"},
		"missing helper":  {`{"credHelpers":{"` + host + `":"absent"}}`, "credential helper not found"},
		"bad helper name": {`{"credHelpers":{"` + host + `":"../x"}}`, "invalid credential helper name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "auth.json")
			if err := os.WriteFile(p, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			opts := s.SourceOptions(nil)
			opts.ConfigFiles = []string{p}
			opts.LookPath = func(file string) (string, error) {
				if file == "docker-credential-broken" {
					return failing, nil
				}
				return "", errors.New("not in PATH")
			}
			_, err := oci.NewSource(opts).Versions(ctx, source.ModulePackage{Source: "oci://" + host + "/mods/net"})
			var ce *oci.CredentialError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v, want a *CredentialError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || ce.Repository != host+"/mods/net" {
				t.Errorf("error %q does not contain %q and name the repository", err, tc.want)
			}
		})
	}
}

func TestDefaultConfigFiles(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1", "XDG_CONFIG_HOME": "/cfg"}
	getenv := func(k string) string { return env[k] }
	j := filepath.Join
	tests := map[string]struct {
		goos string
		env  map[string]string
		want []string
	}{
		"linux":         {"linux", env, []string{j("/run/user/1", "containers", "auth.json"), j("/cfg", "containers", "auth.json"), j("/home/u", ".docker", "config.json"), j("/home/u", ".dockercfg")}},
		"darwin":        {"darwin", env, []string{j("/home/u", ".config", "containers", "auth.json"), j("/cfg", "containers", "auth.json"), j("/home/u", ".docker", "config.json"), j("/home/u", ".dockercfg")}},
		"linux no xdg":  {"linux", map[string]string{"HOME": "/home/u"}, []string{j("/home/u", ".config", "containers", "auth.json"), j("/home/u", ".docker", "config.json"), j("/home/u", ".dockercfg")}},
		"darwin no xdg": {"darwin", map[string]string{"HOME": "/home/u"}, []string{j("/home/u", ".config", "containers", "auth.json"), j("/home/u", ".docker", "config.json"), j("/home/u", ".dockercfg")}},
		"nothing set":   {"linux", map[string]string{}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env = tc.env
			if diff := cmp.Diff(tc.want, oci.DefaultConfigFiles(getenv, tc.goos)); diff != "" {
				t.Errorf("DefaultConfigFiles (-want +got):\n%s", diff)
			}
		})
	}
}
