package interop

import (
	"archive/zip"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// The oracle for the hashes a lock file records (issue 21): for each source
// of hashes, tflock and the real tofu 1.12.6 lock the same configuration,
// each on an empty directory, and the two files are compared byte for
// byte; where tflock records more on purpose (a filesystem mirror's other
// platforms, on init), the test says what more, checks that the rest is
// tofu's file byte for byte, and that tofu and terraform (when
// TFLOCK_TERRAFORM is set) keep tflock's file unchanged. The sources:
//
//   - a registry with OpenTofu 1.12's "packages" field, on tofu's default
//     host (signed, with no signing key, and with
//     OPENTOFU_ENFORCE_GPG_VALIDATION=true) and on another host: init, and
//     providers lock for one and for three platforms
//     (TestInteropHashSourcesRegistry);
//   - a registry without it, on both hosts (the same test);
//   - a packed and an unpacked filesystem mirror, and a network mirror
//     (TestInteropHashSourcesMirrors);
//   - an oci_mirror: TestInteropRemoteTierTofuOCIMirror.

// defaultHost is OpenTofu's default registry host, which its lock rule
// treats apart.
const defaultHost = "registry.opentofu.org"

// hostFixtures are installtest's providers served from host, signed or
// not.
func hostFixtures(host string, unsigned bool) registrytest.Fixtures {
	fx := installtest.DefaultFixtures()
	fx.Modules = nil
	for i := range fx.Providers {
		fx.Providers[i].Addr = strings.Replace(fx.Providers[i].Addr, installtest.RegistryHost, host, 1)
		fx.Providers[i].Unsigned = unsigned
	}
	return fx
}

// setEnv sets one variable of the environment the tools run in.
func (w *world) setEnv(name, value string) {
	w.env = slices.DeleteFunc(w.env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	w.env = append(w.env, name+"="+value)
}

// lockMode is how a lock file is made: init, or providers lock for some
// platforms, with the tool's extra arguments (a mirror).
type lockMode struct {
	name      string
	platforms []string // nil: init
	tofuArgs  []string
	mineArgs  []string
}

// initMode and lockModes are the modes each source is compared in: init,
// and providers lock for one platform (not this machine's) and for three.
func lockModes(tofuArgs, mineArgs []string) []lockMode {
	plats := installtest.Platforms()
	return []lockMode{
		{"init", nil, nil, nil},
		{"providers lock, one platform", plats[1:2], tofuArgs, mineArgs},
		{"providers lock, three platforms", plats, tofuArgs, mineArgs},
	}
}

// lockBoth makes a lock file with tofu, then with tflock, each on an empty
// directory holding the configuration tf, and returns both.
func (w *world) lockBoth(tofu, tf string, m lockMode) (theirs, mine []byte, out string) {
	w.t.Helper()
	n0 := w.providerDownloads()
	theirs, out = w.toolLock(tofu, tf, m)
	n1 := w.providerDownloads()
	defer func() {
		w.t.Logf("%s: provider packages downloaded from the registry: tofu %d, tflock %d (its cache kept across modes)", m.name, n1-n0, w.providerDownloads()-n1)
	}()
	w.removeInstall()
	if m.platforms == nil {
		out += w.tflock(0)
	} else {
		args := []string{"providers-lock", "-cache-dir", filepath.Join(w.home, "tflock-cache")}
		for _, p := range m.platforms {
			args = append(args, "-platform", p)
		}
		args = append(append(args, m.mineArgs...), w.dir)
		out += w.run(0, tflockBinary(w.t), args...)
	}
	return theirs, w.read(".terraform.lock.hcl"), out
}

// toolLock makes a lock file with tofu or terraform (bin) on an empty
// directory holding the configuration tf and returns it.
func (w *world) toolLock(bin, tf string, m lockMode) ([]byte, string) {
	w.t.Helper()
	w.removeInstall()
	w.config(map[string]string{"main.tf": tf})
	var out string
	if m.platforms == nil {
		out = w.run(0, bin, "init", "-input=false", "-no-color")
	} else {
		args := []string{"providers", "lock", "-no-color"}
		for _, p := range m.platforms {
			args = append(args, "-platform="+p)
		}
		out = w.run(0, bin, append(args, m.tofuArgs...)...)
	}
	return w.read(".terraform.lock.hcl"), out
}

// compareTerraform makes the lock file of mode m with terraform and
// compares it with tflock's, mine: the same provider blocks byte for byte
// (terraform's header aside), or, where tflock records more than
// terraform on purpose (more), every hash terraform records is in mine
// and terraform keeps mine unchanged (when it covers this platform).
func (w *world) compareTerraform(terraform, tf string, m lockMode, mine []byte, more bool) {
	w.t.Helper()
	theirs, out := w.toolLock(terraform, tf, m)
	tlf, mlf := parseLock(w.t, theirs), parseLock(w.t, mine)
	if !more {
		tlf.SetHeader(mlf.Header())
		if got := tlf.Bytes(); !bytes.Equal(got, mine) {
			w.t.Errorf("%s: terraform's lock file (header aside) differs from tflock's\n--- terraform\n%s\n--- tflock\n%s\n%s", m.name, theirs, mine, out)
		}
		return
	}
	for p := range tlf.Providers() {
		for _, h := range p.Hashes {
			if !slices.Contains(mlf.ProviderHashes(p.Addr), h) {
				w.t.Errorf("%s: terraform records %s for %s, tflock does not\n--- terraform\n%s\n--- tflock\n%s", m.name, h, p.Addr, theirs, mine)
			}
		}
	}
	if m.platforms == nil || slices.Contains(m.platforms, installtest.Platforms()[0]) {
		w.keepsLock("terraform", terraform, mine)
	}
}

// keepsLock runs "NAME init" on an empty install directory with lock as
// the lock file and checks that the tool leaves it unchanged.
func (w *world) keepsLock(name, bin string, lock []byte) {
	w.t.Helper()
	w.removeInstall()
	writeFile(w.t, w.path(".terraform.lock.hcl"), string(lock))
	out := w.run(0, bin, "init", "-input=false", "-no-color")
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, lock) {
		w.t.Errorf("%s init changed tflock's lock file\n--- tflock\n%s\n--- after %s init\n%s\n%s", name, lock, name, got, out)
	}
}

// TestInteropHashSourcesRegistry: tofu's rule for the hashes a registry
// reports (every one, the packages field's h1: and zh: of every platform
// included, for its default registry unless
// OPENTOFU_ENFORCE_GPG_VALIDATION=true; the signed ones elsewhere), in
// init and in providers lock for one and for three platforms: tflock's lock
// file is tofu's, byte for byte. With TFLOCK_TERRAFORM, the same for
// terraform (header aside) where it records what tofu records (another
// host); from tofu's default registry, where it records less (it ignores
// the packages field), terraform's hashes are all in tflock's file, which
// terraform keeps unchanged. (terraform refuses an unsigned provider.)
func TestInteropHashSourcesRegistry(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	terraform := os.Getenv("TFLOCK_TERRAFORM")
	if terraform != "" {
		terraform = tool(t, "TFLOCK_TERRAFORM", "terraform")
	}
	for _, tc := range []struct {
		name     string
		host     string
		packages bool
		unsigned bool
		enforce  bool
		allH1    bool // tofu records every platform's h1:
	}{
		{"default registry, packages field, signed", defaultHost, true, false, false, true},
		{"default registry, packages field, no signing key", defaultHost, true, true, false, true},
		{"default registry, packages field, signed, OPENTOFU_ENFORCE_GPG_VALIDATION=true", defaultHost, true, false, true, false},
		{"default registry, no packages field", defaultHost, false, false, false, false},
		{"default registry, no packages field, no signing key", defaultHost, false, true, false, false},
		{"other registry, packages field", installtest.RegistryHost, true, false, false, false},
		{"other registry, no packages field", installtest.RegistryHost, false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorldWith(t, hostFixtures(tc.host, tc.unsigned), registrytest.Options{Hosts: []string{tc.host}, Packages: tc.packages})
			if tc.enforce {
				w.setEnv("OPENTOFU_ENFORCE_GPG_VALIDATION", "true")
			}
			// Addresses with their host: terraform's default is another.
			tf := strings.ReplaceAll(providersTF, installtest.RegistryHost, tc.host)
			for _, m := range lockModes(nil, nil) {
				theirs, mine, out := w.lockBoth(tofu, tf, m)
				if !bytes.Equal(mine, theirs) {
					t.Errorf("%s: lock files differ (tofu %d h1:, tflock %d)\n--- tofu\n%s\n--- tflock\n%s\n%s", m.name,
						bytes.Count(theirs, []byte(`"h1:`)), bytes.Count(mine, []byte(`"h1:`)), theirs, mine, out)
				}
				// Each provider gets the zh: of every platform, and the h1:
				// of every platform or of the ones hashed.
				h1 := max(len(m.platforms), 1) // init: this machine's
				if tc.allH1 {
					h1 = len(installtest.Platforms())
				}
				if want := 2 * (h1 + len(installtest.Platforms())); bytes.Count(mine, []byte(`"h1:`))+bytes.Count(mine, []byte(`"zh:`)) != want {
					t.Errorf("%s: tflock recorded %d hashes, want %d\n%s", m.name, bytes.Count(mine, []byte(`"h1:`))+bytes.Count(mine, []byte(`"zh:`)), want, mine)
				}
				// terraform ignores the packages field and requires a
				// signature: it records less than tofu from the default
				// registry, and refuses an unsigned provider.
				if terraform != "" && !tc.unsigned {
					w.compareTerraform(terraform, tf, m, mine, tc.allH1)
				}
			}
		})
	}
}

// TestInteropHashSourcesMirrors: the mirrors, made by "tofu providers
// mirror" from the registry for three platforms. From a packed and an
// unpacked filesystem mirror, tflock's init records on purpose more than
// tofu: the h1: of every platform the mirror holds (and a packed one's
// zh:), so that a lock made on one platform verifies the others' packages
// from the same mirror; providers lock with -fs-mirror records a packed
// mirror's zh: of the platforms asked for beside their h1:. The rest is
// tofu's file byte for byte, and tofu and terraform keep tflock's file
// unchanged. Every mode from a network mirror gives tofu's bytes. With
// TFLOCK_TERRAFORM, terraform's file is compared the same way; from the
// network mirror terraform records less than tofu (the h1: alone, not the
// mirror's zh: that tofu verified), and keeps tflock's file unchanged.
func TestInteropHashSourcesMirrors(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	terraform := os.Getenv("TFLOCK_TERRAFORM")
	if terraform != "" {
		terraform = tool(t, "TFLOCK_TERRAFORM", "terraform")
	}
	w := newWorld(t)
	packed := filepath.Join(w.home, "packed")
	w.config(map[string]string{"main.tf": providersTF})
	args := []string{"providers", "mirror", "-no-color"}
	for _, p := range installtest.Platforms() {
		args = append(args, "-platform="+p)
	}
	w.run(0, tofu, append(args, packed)...)
	w.removeInstall()
	unpacked := filepath.Join(w.home, "unpacked")
	unpackMirror(t, packed, unpacked)
	netURL := w.serveStaticMirror(packed)

	for _, tc := range []struct {
		name, block        string
		tofuArgs, mineArgs []string
		extra              func(addr, version string, plats []string) []hash.Hash // what tflock records more than tofu
		terraformLess      bool                                                   // terraform records less than tofu
	}{
		{"packed filesystem mirror", fmt.Sprintf("filesystem_mirror {\n    path = %q\n  }", packed),
			[]string{"-fs-mirror=" + packed}, []string{"-fs-mirror", packed}, w.mirrorHashes(true), false},
		{"unpacked filesystem mirror", fmt.Sprintf("filesystem_mirror {\n    path = %q\n  }", unpacked),
			[]string{"-fs-mirror=" + unpacked}, []string{"-fs-mirror", unpacked}, w.mirrorHashes(false), false},
		{"network mirror", fmt.Sprintf("network_mirror {\n    url = %q\n  }", netURL),
			[]string{"-net-mirror=" + netURL}, []string{"-net-mirror", netURL}, nil, true}, // terraform records no zh: from it, tofu the one it verified
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.t = t
			w.installation(tc.block)
			// The cache stays warm from one mirror to the next: a hit
			// gives only the h1: the request names, never the hashes of
			// the archive that filled the entry (the packed mirror's zh:),
			// so what the lock records does not depend on what the cache
			// held.
			for _, m := range lockModes(tc.tofuArgs, tc.mineArgs) {
				theirs, mine, out := w.lockBoth(tofu, providersTF, m)
				want := theirs
				if tc.extra != nil {
					// More than tofu, on purpose (README, "Where tflock
					// differs"): on init, the hashes of every platform the
					// mirror holds; a packed mirror's zh: too.
					plats := m.platforms
					if plats == nil {
						plats = installtest.Platforms()
					}
					lf := parseLock(t, theirs)
					for p := range lf.Providers() {
						lf.AddProviderHashes(p.Addr, tc.extra(p.Addr.String(), p.Version.String(), plats)...)
					}
					want = lf.Bytes()
				}
				if !bytes.Equal(mine, want) {
					t.Errorf("%s: tflock's lock file is not the expected one\n--- tofu\n%s\n--- expected\n%s\n--- tflock\n%s\n%s", m.name, theirs, want, mine, out)
				}
				if m.platforms == nil || (tc.extra != nil && len(m.platforms) == len(installtest.Platforms())) {
					w.keepsLock("tofu", tofu, mine)
				}
				if terraform != "" {
					w.compareTerraform(terraform, providersTF, m, mine, tc.extra != nil || tc.terraformLess)
				}
			}
		})
	}
}

// mirrorHashes returns, for a provider version of the registry, the h1: of
// the platforms' packages, and with zh their zh: too: what a filesystem
// mirror made by "tofu providers mirror" (packed) or unpacked from it
// holds.
func (w *world) mirrorHashes(zh bool) func(addr, version string, plats []string) []hash.Hash {
	return func(addr, version string, plats []string) []hash.Hash {
		var out []hash.Hash
		for _, p := range plats {
			info, ok := w.w.Registry.ProviderPackage(addr, version, p)
			if !ok {
				w.t.Fatalf("no package %s %s %s", addr, version, p)
			}
			out = append(out, info.H1)
			if zh {
				out = append(out, info.ZH)
			}
		}
		return out
	}
}

// installation points the tools' CLI configuration at a provider
// installation block holding method alone.
func (w *world) installation(method string) {
	w.t.Helper()
	p := filepath.Join(w.home, "installation.tfrc")
	writeFile(w.t, p, w.cliHosts+"\nprovider_installation {\n  "+method+"\n}\n")
	w.setEnv("TF_CLI_CONFIG_FILE", p)
}

// unpackMirror makes an unpacked filesystem mirror (HOST/NS/TYPE/VERSION/
// OS_ARCH/ directories) of the packages of a packed one.
func unpackMirror(t *testing.T, packed, unpacked string) {
	t.Helper()
	err := filepath.WalkDir(packed, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".zip") {
			return err
		}
		rel, _ := filepath.Rel(packed, filepath.Dir(p)) // HOST/NS/TYPE
		typ := filepath.Base(rel)
		rest := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "terraform-provider-"+typ+"_"), ".zip")
		version, plat, ok := strings.Cut(rest, "_")
		if !ok {
			return fmt.Errorf("unexpected package name %s", p)
		}
		return unzip(p, filepath.Join(unpacked, rel, version, plat))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serveStaticMirror serves dir (a mirror made by "tofu providers mirror", which
// writes the network mirror protocol's JSON documents) as a network mirror
// over TLS, trusted through the world's certificate file, and returns its
// URL.
func (w *world) serveStaticMirror(dir string) string {
	w.t.Helper()
	return w.tlsFileServer(dir) + "/"
}

// tlsFileServer serves dir over TLS for the test, adds the server's
// certificate to the world's SSL_CERT_FILE and returns its URL.
func (w *world) tlsFileServer(dir string) string {
	w.t.Helper()
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(dir)))
	w.t.Cleanup(srv.Close)
	var certFile string
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, "SSL_CERT_FILE="); ok {
			certFile = v
		}
	}
	f, err := os.OpenFile(certFile, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		err = pem.Encode(f, &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return srv.URL
}

// unzip extracts the zip archive at p into dir.
func unzip(p, dir string) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		b, err := readZipFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, f.Mode().Perm()|0o600); err != nil {
			return err
		}
	}
	return nil
}

func readZipFile(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
