package registry_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/testdir"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/registry"
	"github.com/tflock/tflock/source/registry/registrytest"
)

func TestProviderVersions(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, nil)
	list, err := src.Versions(context.Background(), providerPkg(t, "registry.example.test/hashicorp/aws", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range list {
		var plats []string
		for _, p := range a.Platforms {
			plats = append(plats, p.String())
		}
		got = append(got, a.Version.String()+" "+strings.Join(a.Protocols, ",")+" "+strings.Join(plats, ","))
	}
	want := []string{
		"4.67.0 5.0 darwin_arm64,linux_amd64",
		"5.0.0-beta1 6.0 darwin_arm64,linux_amd64",
		"5.1.0 6.0 darwin_arm64,linux_amd64,windows_amd64",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}

	_, err = src.Versions(context.Background(), providerPkg(t, "registry.example.test/hashicorp/nope", "", ""))
	if !errors.Is(err, source.ErrNotFound) {
		t.Errorf("unknown provider: got %v, want ErrNotFound", err)
	}
	var se *source.Error
	if !errors.As(err, &se) || se.Source != "registry.example.test" {
		t.Errorf("unknown provider: error %v does not name the registry host", err)
	}
}

func TestFetchProvider(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, nil)
	pkg := providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64")
	dir := filepath.Join(t.TempDir(), "aws")
	got, err := src.Fetch(context.Background(), pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := srv.ProviderPackage("hashicorp/aws", "5.1.0", "linux_amd64")
	if diff := cmp.Diff([]hash.Hash{info.H1, info.ZH}, got.Hashes); diff != "" {
		t.Errorf("Hashes (-want +got):\n%s", diff)
	}
	if got.Dir != dir || got.Size != info.Size || got.Package != pkg {
		t.Errorf("Fetched = %+v; want Dir %s, Size %d", got, dir, info.Size)
	}
	fi, err := os.Stat(filepath.Join(dir, "terraform-provider-aws_v5.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&0o100 == 0 {
		t.Errorf("the provider executable lost its executable bit: %v", fi.Mode())
	}
	// The staging directory and the downloaded zip are gone: only the
	// package directory is left beside it.
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 || entries[0].Name() != "aws" {
		t.Errorf("leftovers beside the package: %v", entries)
	}
	// Origin: the signed zh: of every platform, with the key ID.
	var want []hash.Record
	for _, plat := range []string{"darwin_arm64", "linux_amd64", "windows_amd64"} {
		in, _ := srv.ProviderPackage("hashicorp/aws", "5.1.0", plat)
		want = append(want, hash.Record{Hash: in.ZH, Provenance: hash.Provenance{
			SignedBy: []string{srv.KeyID}, Registries: []string{"registry.example.test"}, Platforms: []string{plat},
		}})
	}
	slices.SortFunc(want, func(a, b hash.Record) int { return strings.Compare(string(a.Hash), string(b.Hash)) })
	if diff := cmp.Diff(want, got.Origin); diff != "" {
		t.Errorf("Origin (-want +got):\n%s", diff)
	}
}

func TestChecksumsWithPackagesField(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{Packages: true})
	src, _ := newSource(srv, nil)
	recs, err := src.Checksums(context.Background(), providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", ""))
	if err != nil {
		t.Fatal(err)
	}
	got := map[hash.Hash]hash.Provenance{}
	for _, r := range recs {
		got[r.Hash] = r.Provenance
	}
	for _, plat := range []string{"darwin_arm64", "linux_amd64", "windows_amd64"} {
		in, _ := srv.ProviderPackage("hashicorp/aws", "5.1.0", plat)
		if p, ok := got[in.ZH]; !ok || !slices.Equal(p.SignedBy, []string{srv.KeyID}) || !slices.Equal(p.Platforms, []string{plat}) {
			t.Errorf("%s: zh %s: provenance %+v (present %v)", plat, in.ZH, p, ok)
		}
		if p, ok := got[in.H1]; !ok || len(p.SignedBy) != 0 || !slices.Equal(p.Registries, []string{"registry.example.test"}) || !slices.Equal(p.Platforms, []string{plat}) {
			t.Errorf("%s: h1 %s: provenance %+v (present %v)", plat, in.H1, p, ok)
		}
		if n := srv.RequestsTo("/files/providers/registry.example.test/hashicorp/aws/5.1.0/" + in.Filename); n != 0 {
			t.Errorf("%s: package downloaded %d times; Checksums must not download packages", plat, n)
		}
	}
	if len(recs) != 6 {
		t.Errorf("got %d records, want 6 (zh and h1 of 3 platforms)", len(recs))
	}
	// Fetch checks the downloaded package against the packages field too.
	if _, err := src.Fetch(context.Background(), providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "windows_amd64"), filepath.Join(t.TempDir(), "p")); err != nil {
		t.Fatal(err)
	}
	// SHA256SUMS is fetched and verified once per release.
	if n := srv.RequestsTo("/files/providers/registry.example.test/hashicorp/aws/5.1.0/terraform-provider-aws_5.1.0_SHA256SUMS"); n != 1 {
		t.Errorf("SHA256SUMS fetched %d times, want 1", n)
	}
}

func TestLyingRegistry(t *testing.T) {
	for name, tc := range map[string]struct {
		fault     registrytest.Fault
		mismatch  bool
		checksums bool // Checksums notices too, without a download
	}{
		"BadSignature":    {registrytest.BadSignature, true, true},
		"TamperedPackage": {registrytest.TamperedPackage, true, false},
		"TruncatedBody":   {registrytest.TruncatedBody, false, false},
		"UnsignedZH":      {registrytest.UnsignedZH, true, true},
		"WrongH1":         {registrytest.WrongH1, true, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := registrytest.New(t, fixtures, registrytest.Options{Fault: tc.fault})
			src, _ := newSource(srv, nil)
			pkg := providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64")
			dir := filepath.Join(t.TempDir(), "aws")
			_, err := src.Fetch(context.Background(), pkg, dir)
			if err == nil {
				t.Fatal("Fetch succeeded against a lying registry")
			}
			if got := errors.Is(err, source.ErrChecksumMismatch); got != tc.mismatch {
				t.Errorf("errors.Is(%v, ErrChecksumMismatch) = %v, want %v", err, got, tc.mismatch)
			}
			nothingLeft(t, dir)
			// The same verdict when the cache takes the archive and reads
			// it once (FetchArchive), and nothing is stored.
			c, err := cache.Open(t.TempDir(), cache.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Fill(context.Background(), pkg, nil, func(ctx context.Context, dir string) (*source.Fetched, error) {
				return source.FetchArchive(ctx, src, pkg, dir)
			})
			if err == nil {
				t.Fatal("Fill succeeded against a lying registry")
			}
			if got := errors.Is(err, source.ErrChecksumMismatch); got != tc.mismatch {
				t.Errorf("Fill: errors.Is(%v, ErrChecksumMismatch) = %v, want %v", err, got, tc.mismatch)
			}
			if objs, _ := os.ReadDir(filepath.Join(c.Dir(), "objects")); len(objs) != 0 {
				t.Errorf("Fill stored %d objects from a lying registry", len(objs))
			}
			_, err = src.Checksums(context.Background(), pkg)
			if tc.checksums && !errors.Is(err, source.ErrChecksumMismatch) {
				t.Errorf("Checksums: got %v, want ErrChecksumMismatch", err)
			}
			if !tc.checksums && err != nil {
				t.Errorf("Checksums: %v", err)
			}
		})
	}
}

func TestBadSignatureIsErrSignature(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{Fault: registrytest.BadSignature})
	src, _ := newSource(srv, nil)
	_, err := src.Checksums(context.Background(), providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64"))
	if !errors.Is(err, registry.ErrSignature) {
		t.Errorf("got %v, want ErrSignature", err)
	}
}

func TestSignaturePolicy(t *testing.T) {
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "registry.opentofu.org/acme/nokey", Unsigned: true, Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
		{Addr: "registry.example.test/acme/nokey", Unsigned: true, Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{Hosts: []string{"registry.opentofu.org", "registry.example.test"}})
	ctx := context.Background()

	t.Run("OpenTofuExemptHost", func(t *testing.T) {
		src, w := newSource(srv, nil)
		recs, err := src.Checksums(ctx, providerPkg(t, "registry.opentofu.org/acme/nokey", "1.0.0", "linux_amd64"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if len(r.Provenance.SignedBy) != 0 || !slices.Equal(r.Provenance.Registries, []string{"registry.opentofu.org"}) {
				t.Errorf("%s: provenance %+v, want reported by the registry, unsigned", r.Hash, r.Provenance)
			}
		}
		if len(recs) != 2 || len(w.all()) != 1 {
			t.Errorf("got %d records and warnings %q; want 2 records and one warning", len(recs), w.all())
		}
	})
	t.Run("OpenTofuOtherHost", func(t *testing.T) {
		src, _ := newSource(srv, nil)
		_, err := src.Checksums(ctx, providerPkg(t, "registry.example.test/acme/nokey", "1.0.0", "linux_amd64"))
		if !errors.Is(err, registry.ErrSignature) {
			t.Errorf("got %v, want ErrSignature", err)
		}
	})
	t.Run("OpenTofuEnforced", func(t *testing.T) {
		src, _ := newSource(srv, func(o *registry.Options) { o.UnsignedHosts = []string{} })
		_, err := src.Checksums(ctx, providerPkg(t, "registry.opentofu.org/acme/nokey", "1.0.0", "linux_amd64"))
		if !errors.Is(err, registry.ErrSignature) {
			t.Errorf("got %v, want ErrSignature", err)
		}
	})
	t.Run("Terraform", func(t *testing.T) {
		src, _ := newSource(srv, func(o *registry.Options) { o.SignaturePolicy = registry.PolicyTerraform })
		_, err := src.Checksums(ctx, providerPkg(t, "registry.opentofu.org/acme/nokey", "1.0.0", "linux_amd64"))
		if !errors.Is(err, registry.ErrSignature) {
			t.Errorf("got %v, want ErrSignature", err)
		}
	})
}

// TestSigningExempt: issue 21. The hashes of a registry whose host needs
// no signature (OpenTofu's default registry) are marked SigningExempt,
// signed or not, so that a lock records them all as OpenTofu does; with
// OPENTOFU_ENFORCE_GPG_VALIDATION=true in the environment, or on another
// host, or under Terraform's policy, they are not, and an unsigned
// release of the default registry is refused, as OpenTofu refuses it.
func TestSigningExempt(t *testing.T) {
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "registry.opentofu.org/acme/nokey", Unsigned: true, Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
		{Addr: "registry.opentofu.org/acme/signed", Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
		{Addr: "registry.example.test/acme/signed", Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{Hosts: []string{"registry.opentofu.org", "registry.example.test"}, Packages: true})
	ctx := context.Background()
	enforce := func(o *registry.Options) {
		o.LookupEnv = func(k string) (string, bool) { return "true", k == registry.EnforceSignaturesEnv }
	}
	terraform := func(o *registry.Options) { o.SignaturePolicy = registry.PolicyTerraform }
	for _, tc := range []struct {
		name   string
		addr   string
		mod    func(*registry.Options)
		exempt bool
	}{
		{"default registry, no key", "registry.opentofu.org/acme/nokey", nil, true},
		{"default registry, signed", "registry.opentofu.org/acme/signed", nil, true},
		{"default registry, signed, enforced", "registry.opentofu.org/acme/signed", enforce, false},
		{"default registry, signed, Terraform's policy", "registry.opentofu.org/acme/signed", terraform, false},
		{"other host", "registry.example.test/acme/signed", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newSource(srv, tc.mod)
			recs, err := src.Checksums(ctx, providerPkg(t, tc.addr, "1.0.0", "linux_amd64"))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.Provenance.SigningExempt != tc.exempt {
					t.Errorf("%s: SigningExempt %v, want %v", r.Hash, r.Provenance.SigningExempt, tc.exempt)
				}
			}
		})
	}
	src, _ := newSource(srv, enforce)
	if _, err := src.Checksums(ctx, providerPkg(t, "registry.opentofu.org/acme/nokey", "1.0.0", "linux_amd64")); !errors.Is(err, registry.ErrSignature) {
		t.Errorf("unsigned release with %s=true: got %v, want ErrSignature", registry.EnforceSignaturesEnv, err)
	}
}

func TestFetchProviderErrors(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, nil)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		pkg  source.ProviderPackage
		want error
	}{
		"MissingVersion":  {providerPkg(t, "registry.example.test/hashicorp/aws", "9.9.9", "linux_amd64"), source.ErrVersionNotFound},
		"MissingPlatform": {providerPkg(t, "registry.example.test/hashicorp/aws", "4.67.0", "windows_amd64"), source.ErrPlatformNotSupported},
		"UnknownProvider": {providerPkg(t, "registry.example.test/hashicorp/nope", "1.0.0", "linux_amd64"), source.ErrNotFound},
		"UnknownHost":     {providerPkg(t, "other.example.test/hashicorp/aws", "1.0.0", "linux_amd64"), source.ErrNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			_, err := src.Fetch(ctx, tc.pkg, dir)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			nothingLeft(t, dir)
		})
	}
	t.Run("NonEmptyDir", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Fetch(ctx, providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64"), dir); err == nil || !strings.Contains(err.Error(), "not empty") {
			t.Errorf("got %v, want a not-empty error", err)
		}
	})
}

func TestRealisticSHA256SUMS(t *testing.T) {
	dir := testdir.OpenTofu(t, "derived")
	doc, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS.realistic"))
	if err != nil {
		t.Fatal(err)
	}
	wantText, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS.realistic.expected-zh.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := registry.ParseSums(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range sums.Hashes() {
		got = append(got, string(h))
	}
	want := strings.Fields(string(wantText))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zh hashes (-want +got):\n%s", diff)
	}
}

func TestChecksumsWithoutPlatform(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/odd", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{"plan9_386"}}}},
	}}, registrytest.Options{})
	src, _ := newSource(srv, nil)
	recs, err := src.Checksums(context.Background(), providerPkg(t, "registry.example.test/acme/odd", "1.0.0", ""))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := srv.ProviderPackage("acme/odd", "1.0.0", "plan9_386")
	if len(recs) != 1 || recs[0].Hash != info.ZH {
		t.Errorf("records %v, want the one zh %s", recs, info.ZH)
	}
}

func TestUnsupportedProtocol(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/old", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Protocols: []string{"4.0"}}}},
	}}, registrytest.Options{})
	src, _ := newSource(srv, nil)
	dir := filepath.Join(t.TempDir(), "p")
	_, err := src.Fetch(context.Background(), providerPkg(t, "registry.example.test/acme/old", "1.0.0", "linux_amd64"), dir)
	if !errors.Is(err, registry.ErrProtocolNotSupported) {
		t.Errorf("got %v, want ErrProtocolNotSupported", err)
	}
	nothingLeft(t, dir)
}

func TestFetchEvents(t *testing.T) {
	srv := registrytest.New(t, registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/big", Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Size: 3 << 20}}},
	}}, registrytest.Options{})
	var mu sync.Mutex
	var evs []source.Event
	src, _ := newSource(srv, func(o *registry.Options) {
		o.Events = source.EventsFunc(func(e source.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() })
	})
	pkg := providerPkg(t, "registry.example.test/acme/big", "1.0.0", "linux_amd64")
	if _, err := src.Fetch(context.Background(), pkg, filepath.Join(t.TempDir(), "p")); err != nil {
		t.Fatal(err)
	}
	info, _ := srv.ProviderPackage("acme/big", "1.0.0", "linux_amd64")
	if len(evs) < 3 {
		t.Fatalf("events %v", evs)
	}
	first, last, prev := evs[0], evs[len(evs)-1], evs[len(evs)-2]
	if first.Kind != source.EventFetchStarted || first.Total != info.Size || first.Package != pkg {
		t.Errorf("first event %+v, want fetch started with total %d", first, info.Size)
	}
	if prev.Kind != source.EventFetchProgress || prev.Bytes != info.Size {
		t.Errorf("last progress event %+v, want all %d bytes", prev, info.Size)
	}
	if last.Kind != source.EventFetchDone || last.Bytes != info.Size || strings.Contains(last.Detail, "?") {
		t.Errorf("last event %+v", last)
	}
}

func TestSignedByTrust(t *testing.T) {
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "acme/community", Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
		{Addr: "acme/partner", Partner: true, Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
		{Addr: "registry.opentofu.org/acme/nokey", Unsigned: true, Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{Hosts: []string{"registry.example.test", "registry.opentofu.org"}})
	ctx := context.Background()
	plain, _ := newSource(srv, nil)
	partners, _ := newSource(srv, func(o *registry.Options) {
		o.SignaturePolicy = registry.PolicyTerraform
		o.PartnerKeys = []string{srv.PartnerKey}
	})
	official, _ := newSource(srv, func(o *registry.Options) { o.OfficialKeys = []string{srv.PublicKey} })
	for _, tc := range []struct {
		src  *registry.Source
		addr string
		want registry.Signer
	}{
		{plain, "registry.example.test/acme/community", registry.Signer{KeyID: srv.KeyID, Trust: registry.TrustCommunity}},
		{plain, "registry.example.test/acme/partner", registry.Signer{KeyID: srv.KeyID, Trust: registry.TrustCommunity}},
		{partners, "registry.example.test/acme/partner", registry.Signer{KeyID: srv.KeyID, Trust: registry.TrustPartner}},
		{partners, "registry.example.test/acme/community", registry.Signer{KeyID: srv.KeyID, Trust: registry.TrustCommunity}},
		{official, "registry.example.test/acme/partner", registry.Signer{KeyID: srv.KeyID, Trust: registry.TrustOfficial}},
		{plain, "registry.opentofu.org/acme/nokey", registry.Signer{}},
	} {
		got, err := tc.src.SignedBy(ctx, providerPkg(t, tc.addr, "1.0.0", ""))
		if err != nil || got != tc.want {
			t.Errorf("SignedBy(%s) = %+v, %v; want %+v (%s)", tc.addr, got, err, tc.want, tc.want.Trust)
		}
	}
}

// TestDownloadResponseMemoized checks that Checksums followed by Fetch of
// the same package (a lock run's download mode) ask for the platform's
// download response once, also under concurrency.
func TestDownloadResponseMemoized(t *testing.T) {
	srv := registrytest.New(t, fixtures, registrytest.Options{})
	src, _ := newSource(srv, nil)
	ctx := context.Background()
	pkg := providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_amd64")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := src.Checksums(ctx, pkg); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := src.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "p")); err != nil {
		t.Fatal(err)
	}
	const path = "/v1/providers/hashicorp/aws/5.1.0/download/linux/amd64"
	if n := srv.RequestsTo(path); n != 1 {
		t.Errorf("%s requested %d times, want 1", path, n)
	}
	// Another platform is another response.
	if _, err := src.Checksums(ctx, providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "darwin_arm64")); err != nil {
		t.Fatal(err)
	}
	if n := srv.RequestsTo("/v1/providers/hashicorp/aws/5.1.0/download/darwin/arm64"); n != 1 {
		t.Errorf("darwin_arm64 download response requested %d times, want 1", n)
	}
	// A failure is not kept: a missing platform is asked for each time.
	missing := providerPkg(t, "registry.example.test/hashicorp/aws", "5.1.0", "linux_arm")
	for range 2 {
		if _, err := src.Checksums(ctx, missing); !errors.Is(err, source.ErrPlatformNotSupported) {
			t.Fatalf("got %v, want ErrPlatformNotSupported", err)
		}
	}
	if n := srv.RequestsTo("/v1/providers/hashicorp/aws/5.1.0/download/linux/arm"); n != 2 {
		t.Errorf("missing platform requested %d times, want 2 (failures are not memoized)", n)
	}
}

// TestUnsignedWarningNamesTheTransport: checksums accepted without a
// signature are described as trusted on the strength of TLS only when they
// came over https; from a plain-http registry the warning says that nothing
// authenticates them.
func TestUnsignedWarningNamesTheTransport(t *testing.T) {
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "registry.example.test/acme/nokey", Unsigned: true, Versions: []registrytest.ProviderVersion{{Version: "1.0.0"}}},
	}}
	srv := registrytest.New(t, fx, registrytest.Options{})
	pkg := providerPkg(t, "registry.example.test/acme/nokey", "1.0.0", "linux_amd64")
	exempt := func(o *registry.Options) { o.UnsignedHosts = []string{"registry.example.test"} }

	src, w := newSource(srv, exempt)
	if _, err := src.Checksums(context.Background(), pkg); err != nil {
		t.Fatal(err)
	}
	if got := w.all(); len(got) != 1 || !strings.Contains(got[0], "strength of the TLS connections to registry.example.test") {
		t.Errorf("over https: warnings %q, want one naming the TLS connection", got)
	}

	// The same registry behind a plain-http front end.
	target, _ := url.Parse("https://registry.example.test")
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = srv.Client().Transport
	plain := httptest.NewServer(rp)
	t.Cleanup(plain.Close)
	src, w = newSource(srv, func(o *registry.Options) {
		exempt(o)
		o.HTTPClient = plain.Client()
		o.Hosts = map[string]registry.Services{"registry.example.test": {"providers.v1": plain.URL + "/v1/providers/"}}
	})
	if _, err := src.Checksums(context.Background(), pkg); err != nil {
		t.Fatal(err)
	}
	got := w.all()
	if len(got) != 1 {
		t.Fatalf("over http: warnings %q, want one", got)
	}
	if strings.Contains(got[0], "TLS") || !strings.Contains(got[0], "plain http") || !strings.Contains(got[0], plain.URL+"/v1/providers/acme/nokey/1.0.0/download") {
		t.Errorf("over http: warning %q, want plain http named, the URL, and no TLS", got[0])
	}
}
