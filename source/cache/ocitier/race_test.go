package ocitier_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/internal/distributiontest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/cache/ocitier"
	"github.com/tflock/tflock/source/oci"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// holdTransport holds a writer's first write of a version's index (a PUT
// of the manifest tag) until released: the gap, between the writer's last
// read of the index and its write landing, in which other writers finish.
type holdTransport struct {
	next              http.RoundTripper
	path              string // "/v2/REPOSITORY/manifests/TAG"
	once              sync.Once
	reached, released chan struct{}
}

func (h *holdTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut && req.URL.Path == h.path {
		h.once.Do(func() {
			close(h.reached)
			<-h.released
		})
	}
	return h.next.RoundTrip(req)
}

// staleIndexWriter is the race a registry without compare-and-swap
// allows: machine B reads a version's index (empty) and writes its own,
// but its write lands only after machines A1..A3 have each written their
// platform, read the index back and found it there. B's index, made from
// its stale read, replaces theirs. No platform may be lost for that: each
// reads back through the tier, the index OpenTofu reads lists all four,
// and the tier's own tags are no versions to OpenTofu or tflock.
// newTier opens a machine's tier; wrap (nil: none) wraps its transport.
// With lister nil, the registry refuses to list tags (as one may refuse
// a credential that can read and write): the index keeps only B's
// platform, and the others read back through their own tags.
func staleIndexWriter(t *testing.T, newTier func(wrap func(http.RoundTripper) http.RoundTripper) *ocitier.Tier, repo *remote.Repository, lister *oci.Options) {
	t.Helper()
	ctx := context.Background()
	version := "5.1.0+ent"
	want := map[source.Platform]hash.Hash{}
	put := func(tier *ocitier.Tier, plat source.Platform) error {
		pkg := provider(t, "hashicorp/aws", version, plat)
		zip, hashes := providerZip(t, pkg)
		want[plat] = zhOf(hashes)
		return tier.Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip)
	}

	hold := &holdTransport{path: "/v2/" + providerRepository + "/manifests/5.1.0_ent", reached: make(chan struct{}), released: make(chan struct{})}
	stale := newTier(func(next http.RoundTripper) http.RoundTripper { hold.next = next; return hold })
	pkgB := provider(t, "hashicorp/aws", version, darwin)
	zipB, hashesB := providerZip(t, pkgB)
	want[darwin] = zhOf(hashesB)
	errB := make(chan error, 1)
	go func() { errB <- stale.Put(ctx, pkgB, cache.RemoteArchive{Hashes: hashesB}, zipB) }()
	select {
	case <-hold.reached: // B read the index and is writing it
	case err := <-errB:
		t.Fatalf("machine B finished before writing its index: %v", err)
	}
	for _, plat := range []source.Platform{linux, win, arm} {
		if err := put(newTier(nil), plat); err != nil {
			t.Fatalf("machine %s: %v", plat, err)
		}
	}
	close(hold.released) // B's write, from its read before theirs, lands
	if err := <-errB; err != nil {
		t.Fatalf("machine B: %v", err)
	}

	reader := newTier(nil)
	for plat, zh := range want {
		out := filepath.Join(t.TempDir(), "p.zip")
		a, err := reader.Get(ctx, provider(t, "hashicorp/aws", version, plat), nil, out)
		if err != nil || a.Hashes[0] != zh {
			t.Errorf("get %s: %v %v, want %s", plat, a.Hashes, err, zh)
		}
	}
	if lister == nil {
		if got := checkProviderVersion(t, repo, "5.1.0_ent"); len(got) != 1 || got[darwin] != want[darwin] {
			t.Errorf("the index holds %v, want B's platform only", got)
		}
		return
	}
	if got := checkProviderVersion(t, repo, "5.1.0_ent"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the index OpenTofu reads holds %v, want %v", got, want)
	}
	so := *lister
	so.ProviderRepository = func(context.Context, tfaddrProvider) (string, error) {
		return repo.Reference.Host() + "/" + repo.Reference.Repository, nil
	}
	vs, err := oci.NewSource(so).Versions(ctx, provider(t, "hashicorp/aws", version, linux))
	if err != nil || len(vs) != 1 || vs[0].Version.String() != version {
		t.Errorf("versions listed: %v %v, want only %s", vs, err, version)
	}
}

// TestDistributionStaleIndexWrite is staleIndexWriter on the real CNCF
// distribution registry.
func TestDistributionStaleIndexWrite(t *testing.T) {
	reg := distributiontest.Start(t)
	repo, err := remote.NewRepository(reg.Host + "/" + providerRepository)
	if err != nil {
		t.Fatal(err)
	}
	repo.Client = reg.Client()
	staleIndexWriter(t, func(wrap func(http.RoundTripper) http.RoundTripper) *ocitier.Tier {
		c := reg.Client()
		if wrap != nil {
			c.Transport = wrap(c.Transport)
		}
		tr, err := ocitier.New("oci://"+reg.Host+"/fleet", ocitier.Options{OCI: oci.Options{HTTPClient: c}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}, repo, &oci.Options{HTTPClient: reg.Client()})
}

// TestStaleIndexWrite is staleIndexWriter on the in-process registry,
// which lists tags, then on one that refuses to.
func TestStaleIndexWrite(t *testing.T) {
	for _, listing := range []bool{true, false} {
		t.Run(fmt.Sprintf("listing=%v", listing), func(t *testing.T) {
			r := newReg(t)
			var lister *oci.Options
			if listing {
				o := r.ociOptions()
				lister = &o
			} else {
				r.setFail(func(req *http.Request) int {
					if strings.HasSuffix(req.URL.Path, "/tags/list") {
						return http.StatusForbidden
					}
					return 0
				})
			}
			staleIndexWriter(t, func(wrap func(http.RoundTripper) http.RoundTripper) *ocitier.Tier {
				c := &http.Client{Transport: http.DefaultTransport}
				if wrap != nil {
					c.Transport = wrap(c.Transport)
				}
				tr, err := ocitier.New("oci://"+r.host()+"/fleet", ocitier.Options{OCI: oci.Options{PlainHTTP: true, HTTPClient: c}})
				if err != nil {
					t.Fatal(err)
				}
				return tr
			}, r.repo(t, providerRepository), lister)
		})
	}
}

// TestOldLayoutIndex: a version a previous tflock wrote (an index, no
// platform tags) reads back; a machine of another platform adds its own
// and keeps the old one; the old platform written again gains its tag
// and leaves the index as it was.
func TestOldLayoutIndex(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	repo := r.repo(t, providerRepository)
	old := provider(t, "hashicorp/aws", "5.1.0", darwin)
	oldZip, oldHashes := providerZip(t, old)
	z, err := os.ReadFile(oldZip)
	if err != nil {
		t.Fatal(err)
	}
	// The manifest as every tflock writes it: OpenTofu's fields, the
	// empty config, in encoding/json's order.
	config := []byte("{}")
	cdesc := ocispec.Descriptor{MediaType: emptyConfigType, Digest: digest.FromBytes(config), Size: 2}
	layer := ocispec.Descriptor{MediaType: zipMediaType, Digest: digest.FromBytes(z), Size: int64(len(z))}
	mb, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: manifestMediaType, ArtifactType: targetArtifact, Config: cdesc, Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	dm := ocispec.Descriptor{MediaType: manifestMediaType, Digest: digest.FromBytes(mb), Size: int64(len(mb))}
	for _, b := range []struct {
		d    ocispec.Descriptor
		data []byte
	}{{cdesc, config}, {layer, z}, {dm, mb}} {
		if err := repo.Push(ctx, b.d, bytes.NewReader(b.data)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ocitest.PushIndex(ctx, repo, providerArtifact, []ocitest.IndexEntry{{Manifest: dm, ArtifactType: targetArtifact, Platform: darwin}}, "5.1.0"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "p.zip")
	if a, err := r.tier(t, "fleet").Get(ctx, old, nil, out); err != nil || a.Hashes[0] != zhOf(oldHashes) {
		t.Fatalf("get from the old layout: %v %v", a.Hashes, err)
	}
	pkg := provider(t, "hashicorp/aws", "5.1.0", linux)
	zip, hashes := providerZip(t, pkg)
	if err := r.tier(t, "fleet").Put(ctx, pkg, cache.RemoteArchive{Hashes: hashes}, zip); err != nil {
		t.Fatal(err)
	}
	want := map[source.Platform]hash.Hash{darwin: zhOf(oldHashes), linux: zhOf(hashes)}
	if got := checkProviderVersion(t, repo, "5.1.0"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("index holds %v, want %v", got, want)
	}
	before, err := repo.Resolve(ctx, "5.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.tier(t, "fleet").Put(ctx, old, cache.RemoteArchive{Hashes: oldHashes}, oldZip); err != nil {
		t.Fatal(err)
	}
	if after, err := repo.Resolve(ctx, "5.1.0"); err != nil || after.Digest != before.Digest {
		t.Errorf("the index changed: %v %v", after.Digest, err)
	}
	if d, err := repo.Resolve(ctx, "tflock-5.1.0-darwin_arm64"); err != nil || d.Digest != dm.Digest {
		t.Errorf("the old platform's tag: %v %v, want %s", d.Digest, err, dm.Digest)
	}
}

// TestPlatformTagIsChecked: a platform tag is read only as a
// provider-target manifest; one that holds something else is that
// package's problem, not the tier's (see also TestRefusesForeignArtifacts).
func TestPlatformTagIsChecked(t *testing.T) {
	r := newReg(t)
	ctx := context.Background()
	// The index lists only linux; darwin's tag holds a module package.
	lin := provider(t, "hashicorp/aws", "5.1.0", linux)
	linZip, linHashes := providerZip(t, lin)
	if err := r.tier(t, "fleet").Put(ctx, lin, cache.RemoteArchive{Hashes: linHashes}, linZip); err != nil {
		t.Fatal(err)
	}
	pushForeign(t, r.repo(t, providerRepository), "tflock-5.1.0-darwin_arm64")
	tier := r.tier(t, "fleet")
	if _, err := tier.Get(ctx, provider(t, "hashicorp/aws", "5.1.0", darwin), nil, filepath.Join(t.TempDir(), "p.zip")); !errors.Is(err, oci.ErrInvalidArtifact) || errors.Is(err, ocitier.ErrUnavailable) {
		t.Fatalf("get through a foreign platform tag: %v", err)
	}
	// A platform neither the index nor a tag holds is a miss.
	if _, err := tier.Get(ctx, provider(t, "hashicorp/aws", "5.1.0", win), nil, filepath.Join(t.TempDir(), "w.zip")); !errors.Is(err, source.ErrNotFound) || errors.Is(err, ocitier.ErrUnavailable) {
		t.Fatalf("get of a platform the tier lacks: %v", err)
	}
}
