package registry_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

const vpc = "registry.example.test/terraform-aws-modules/vpc/aws"

func modulePkg(version string) source.ModulePackage {
	return source.ModulePackage{Source: vpc, Version: versions.MustParse(version)}
}

func TestModuleVersions(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, nil)
	list, err := src.Versions(context.Background(), source.ModulePackage{Source: vpc})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range list {
		got = append(got, a.Version.String())
	}
	if want := []string{"1.0.0", "2.0.0", "3.18.1", "3.19.0"}; !equal(got, want) {
		t.Errorf("versions %v, want %v", got, want)
	}
	_, err = src.Versions(context.Background(), source.ModulePackage{Source: "registry.example.test/x/y/z"})
	if !errors.Is(err, source.ErrNotFound) {
		t.Errorf("unknown module: %v, want ErrNotFound", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFetchModule(t *testing.T) {
	const secret = "module-token"
	srv := registrytest.New(t, fixtures, registrytest.Options{Token: secret})
	src, _ := newSource(srv, func(o *registry.Options) {
		o.Credentials = registry.Tokens{"registry.example.test": secret}
	})
	ctx := context.Background()
	for _, tc := range []struct {
		version, subdir string
		files           []string
	}{
		{"3.19.0", "", []string{"main.tf", "modules/nat/main.tf"}}, // JSON location, .tar.gz
		{"3.18.1", "modules/nat", []string{"main.tf"}},             // 204 + relative X-Terraform-Get with //subdir, .zip
		{"2.0.0", "", []string{"main.tf"}},                         // direct download with use_registry_credentials
	} {
		t.Run(tc.version, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "m")
			got, err := src.Fetch(ctx, modulePkg(tc.version), dir)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := srv.ModuleH1("terraform-aws-modules/vpc/aws", tc.version)
			if len(got.Hashes) != 1 || got.Hashes[0] != want {
				t.Errorf("Hashes %v, want [%s]", got.Hashes, want)
			}
			if got.Subdir != tc.subdir || got.Package != modulePkg(tc.version) {
				t.Errorf("Subdir %q, Package %v", got.Subdir, got.Package)
			}
			for _, f := range tc.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	t.Run("Git", func(t *testing.T) {
		// The registry reports a git location (for a dispatcher to route)
		// and does not fetch it itself.
		loc, err := src.ModuleLocation(ctx, modulePkg("1.0.0"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "git::https://git.example.test/vpc.git//sub?ref=v1.0.0"; loc.Address != want || loc.Archive != nil {
			t.Errorf("ModuleLocation = %q (archive fetcher %v), want %q and none", loc.Address, loc.Archive != nil, want)
		}
		dir := filepath.Join(t.TempDir(), "m")
		_, err = src.Fetch(ctx, modulePkg("1.0.0"), dir)
		if !errors.Is(err, registry.ErrUnsupportedLocation) || !strings.Contains(err.Error(), "assemble.Dispatch") {
			t.Errorf("Fetch of a module located in git: %v, want ErrUnsupportedLocation naming the dispatcher", err)
		}
		nothingLeft(t, dir)
	})
	t.Run("ArchiveLocation", func(t *testing.T) {
		// An archive location comes with its fetcher, which sends the
		// registry's token as use_registry_credentials asks.
		loc, err := src.ModuleLocation(ctx, modulePkg("2.0.0"))
		if err != nil {
			t.Fatal(err)
		}
		if loc.Archive == nil || !strings.HasPrefix(loc.Address, "http") {
			t.Fatalf("ModuleLocation = %q (archive fetcher %v), want an HTTP archive with its fetcher", loc.Address, loc.Archive != nil)
		}
		f, err := loc.Archive.Fetch(ctx, modulePkg("2.0.0"), filepath.Join(t.TempDir(), "m"))
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := srv.ModuleH1("terraform-aws-modules/vpc/aws", "2.0.0"); len(f.Hashes) != 1 || f.Hashes[0] != want || f.Package != modulePkg("2.0.0") {
			t.Errorf("Fetched %+v, want h1 %s", f, want)
		}
	})
	t.Run("MissingVersion", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "m")
		if _, err := src.Fetch(ctx, modulePkg("9.0.0"), dir); !errors.Is(err, source.ErrVersionNotFound) {
			t.Errorf("got %v, want ErrVersionNotFound", err)
		}
		nothingLeft(t, dir)
	})
	t.Run("DirectWithoutToken", func(t *testing.T) {
		// The registry API and the direct download both need the token.
		src, _ := newSource(srv, nil)
		if _, err := src.Fetch(ctx, modulePkg("2.0.0"), filepath.Join(t.TempDir(), "m")); !errors.Is(err, source.ErrUnauthorized) {
			t.Errorf("got %v, want ErrUnauthorized", err)
		}
	})
	if _, err := hash.ParseHash(string(mustH1(t, srv, "3.19.0"))); err != nil {
		t.Error(err)
	}
}

func mustH1(t *testing.T, srv *registrytest.Server, v string) hash.Hash {
	h, ok := srv.ModuleH1("terraform-aws-modules/vpc/aws", v)
	if !ok {
		t.Fatalf("no h1 for %s", v)
	}
	return h
}

func TestModuleVersionSpelling(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Modules: []registrytest.Module{
		{Addr: "ns/name/sys", Versions: []registrytest.ModuleVersion{{Version: "v1.2"}}},
	}}, registrytest.Options{})
	src, _ := newSource(srv, nil)
	ctx := context.Background()
	pkg := source.ModulePackage{Source: "registry.example.test/ns/name/sys"}
	list, err := src.Versions(ctx, pkg)
	if err != nil || len(list) != 1 || list[0].Version.String() != "1.2.0" || list[0].Ref != "v1.2" {
		t.Fatalf("Versions = %+v, %v; want 1.2.0 published as v1.2", list, err)
	}
	pkg.Version = list[0].Version
	got, err := src.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "m"))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := srv.ModuleH1("ns/name/sys", "v1.2"); got.Hashes[0] != want {
		t.Errorf("h1 %s, want %s", got.Hashes[0], want)
	}
}

func TestPackageSizeLimit(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, func(o *registry.Options) { o.Limits.MaxBytes = 100 })
	dir := filepath.Join(t.TempDir(), "p")
	_, err := src.Fetch(context.Background(), providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64"), dir)
	if !errors.Is(err, registry.ErrTooLarge) {
		t.Errorf("got %v, want ErrTooLarge", err)
	}
	nothingLeft(t, dir)
}

func TestModuleLocationIndirection(t *testing.T) {
	var zipBuf bytes.Buffer
	zw := zip.NewWriter(&zipBuf)
	w, _ := zw.Create("main.tf")
	w.Write([]byte("# indirect\n"))
	zw.Close()
	hops := 0
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/modules/ns/n/s/1.0.0/download":
			w.Header().Set("X-Terraform-Get", "/page")
			w.WriteHeader(http.StatusNoContent)
		case "/page":
			hops++
			w.Write([]byte(`<html><head><meta name="terraform-get" content="/hdr?a=1&amp;b=2"></head></html>`))
		case "/hdr":
			hops++
			w.Header().Set("X-Terraform-Get", "./pkg.zip")
			w.WriteHeader(http.StatusNoContent)
		case "/v1/modules/ns/n/s/2.0.0/download":
			w.Header().Set("X-Terraform-Get", "/loop")
			w.WriteHeader(http.StatusNoContent)
		case "/loop":
			w.Header().Set("X-Terraform-Get", "/loop")
			w.WriteHeader(http.StatusNoContent)
		case "/pkg.zip":
			w.Write(zipBuf.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	src := registry.NewSource(registry.Options{
		HTTPClient:  ts.Client(),
		Credentials: registry.Tokens{},
		Hosts:       map[string]registry.Services{"registry.example.test": {"modules.v1": ts.URL + "/v1/modules/"}},
	})
	pkg := source.ModulePackage{Source: "registry.example.test/ns/n/s", Version: versions.MustParse("1.0.0")}
	dir := filepath.Join(t.TempDir(), "m")
	got, err := src.Fetch(context.Background(), pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "main.tf")); err != nil || string(b) != "# indirect\n" || hops != 2 {
		t.Errorf("main.tf = %q, %v after %d hops", b, err, hops)
	}
	if !strings.HasSuffix(got.Location, "/pkg.zip") {
		t.Errorf("Location %q", got.Location)
	}
	pkg.Version = versions.MustParse("2.0.0")
	dir = filepath.Join(t.TempDir(), "loop")
	if _, err := src.Fetch(context.Background(), pkg, dir); !errors.Is(err, registry.ErrUnsupportedLocation) {
		t.Errorf("endless X-Terraform-Get chain: got %v, want ErrUnsupportedLocation", err)
	}
	nothingLeft(t, dir)
}

// TestLocalModuleLocationRefused: a registry (or an X-Terraform-Get answer
// on the way) that gives a location on this machine's disk is refused with
// an error naming the URL that gave it and the location; nothing is
// fetched and nothing is left behind.
func TestLocalModuleLocationRefused(t *testing.T) {
	repo := t.TempDir() // a real directory: the location must be refused, not found missing
	locations := []string{
		"git::file://" + filepath.ToSlash(repo),
		"git::file://" + filepath.ToSlash(repo) + "//sub?ref=v1.0.0",
		"file://" + filepath.ToSlash(repo) + "/pkg.zip",
		"FILE://" + filepath.ToSlash(repo),
		"file::" + repo,
		"git::" + repo,
		"git::./repo",
		"git::../repo",
		`git::C:\repo`,
		`C:\repo`,
		`.\repo`,
		"hg::/srv/repo",
	}
	var asked string
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The index of the location: the patch number of the version asked
		// for, or the "i" query argument of a hop.
		i := -1
		if _, err := fmt.Sscanf(r.URL.Path, "/v1/modules/ns/n/s/1.0.%d/download", &i); err != nil {
			if _, err := fmt.Sscanf(r.URL.Query().Get("i"), "%d", &i); err != nil {
				i = -1
			}
		}
		if i < 0 || i >= len(locations) {
			http.NotFound(w, r)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/download"): // the registry's answer
			w.Header().Set("X-Terraform-Get", locations[i])
			w.WriteHeader(http.StatusNoContent)
		case r.URL.Path == "/hop": // an HTTP location that names another
			asked = r.URL.RawQuery
			w.Header().Set("X-Terraform-Get", locations[i])
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	src := registry.NewSource(registry.Options{
		HTTPClient:  ts.Client(),
		Credentials: registry.Tokens{},
		Hosts:       map[string]registry.Services{"registry.example.test": {"modules.v1": ts.URL + "/v1/modules/"}},
		LookupEnv:   noEnv,
	})
	for i, loc := range locations {
		t.Run(loc, func(t *testing.T) {
			// The registry's own answer.
			dir := filepath.Join(t.TempDir(), "m")
			pkg := source.ModulePackage{Source: "registry.example.test/ns/n/s", Version: versions.MustParse(fmt.Sprintf("1.0.%d", i))}
			_, err := src.Fetch(context.Background(), pkg, dir)
			if !errors.Is(err, registry.ErrLocalLocation) || !errors.Is(err, registry.ErrUnsupportedLocation) {
				t.Fatalf("got %v, want ErrLocalLocation", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("%s/v1/modules/ns/n/s/1.0.%d/download", ts.URL, i)) || !strings.Contains(msg, fmt.Sprintf("%q", loc)) {
				t.Errorf("error %q: want the registry URL and the location named", msg)
			}
			// Nor is it reported for a dispatcher to route.
			if loc, err := src.ModuleLocation(context.Background(), pkg); !errors.Is(err, registry.ErrLocalLocation) || loc.Address != "" {
				t.Errorf("ModuleLocation = %q, %v; want ErrLocalLocation and no location", loc.Address, err)
			}
			nothingLeft(t, dir)

			// Behind an HTTP location of an HTTP archive module.
			dir = filepath.Join(t.TempDir(), "a")
			arch := registry.NewArchiveSource(registry.Options{HTTPClient: ts.Client(), Credentials: registry.Tokens{}, LookupEnv: noEnv})
			_, err = arch.Fetch(context.Background(), source.ModulePackage{Source: fmt.Sprintf("%s/hop?i=%d", ts.URL, i)}, dir)
			if !errors.Is(err, registry.ErrLocalLocation) || !strings.Contains(err.Error(), ts.URL+"/hop") {
				t.Errorf("behind an X-Terraform-Get hop: got %v, want ErrLocalLocation naming the hop", err)
			}
			if asked == "" {
				t.Error("the hop was not asked")
			}
			if loc, err := arch.ModuleLocation(context.Background(), source.ModulePackage{Source: fmt.Sprintf("%s/hop?i=%d", ts.URL, i)}); !errors.Is(err, registry.ErrLocalLocation) || loc.Address != "" {
				t.Errorf("ModuleLocation behind a hop = %q, %v; want ErrLocalLocation and no location", loc.Address, err)
			}
			nothingLeft(t, dir)
		})
	}
}

// A module zip fetched for the cache (FetchArchive) is handed
// over unextracted and read once by the cache: the entry is the module's
// tree, hashed to the module h1: (VCS metadata left out), with the
// location's subdirectory; a tar.gz is still extracted by the source.
func TestModuleZipHandedOver(t *testing.T) {
	fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: "acme/net/aws", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Delivery: registrytest.DeliverHeader, Subdir: "sub", Files: map[string]string{"sub/main.tf": "# net\n", ".git/config": "[core]\n", "README.md": "net\n"}},
		{Version: "2.0.0", Files: map[string]string{"main.tf": "# net 2\n"}},
	}}}}
	srv := registrytest.New(t, fx, registrytest.Options{})
	src, _ := newSource(srv, nil)
	pkg := func(v string) source.ModulePackage {
		return source.ModulePackage{Source: "registry.example.test/acme/net/aws", Version: versions.MustParse(v)}
	}
	f, err := src.FetchArchive(context.Background(), pkg("1.0.0"), filepath.Join(t.TempDir(), "m"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Archive == "" || f.Dir != "" || f.Subdir != "sub" {
		t.Fatalf("Fetched Archive %q, Dir %q, Subdir %q; want the zip handed over, subdirectory sub", f.Archive, f.Dir, f.Subdir)
	}
	c, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.0", "2.0.0"} {
		e, _, err := c.Fill(context.Background(), pkg(v), nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
			return source.FetchArchive(ctx, src, pkg(v), dir)
		})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := srv.ModuleH1("acme/net/aws", v)
		if e.H1 != want {
			t.Errorf("%s: entry h1 %s, want %s", v, e.H1, want)
		}
		if got, err := (hash.Options{Module: true}).H1Dir(context.Background(), e.Dir); err != nil || got != want {
			t.Errorf("%s: the stored tree hashes to %s, %v; want %s", v, got, err, want)
		}
		if _, err := os.Stat(filepath.Join(e.Dir, ".git")); !os.IsNotExist(err) {
			t.Errorf("%s: the entry holds .git (%v)", v, err)
		}
	}
}
