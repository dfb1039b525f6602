package interop

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestInteropLargeProviderStreamed: a provider large enough to be read
// while it downloads (a zip over 8 MiB: its end is asked for with a ranged
// request and the cache inflates and hashes it as it arrives). tflock and
// "tofu init", each on an empty directory, write the same lock file, and
// tofu accepts tflock's install with -lockfile=readonly.
func TestInteropLargeProviderStreamed(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	plat := installtest.Platforms()[0]
	addr := installtest.RegistryHost + "/acme/large"
	w := newWorldWith(t, registrytest.Fixtures{Providers: []registrytest.Provider{{
		Addr:     addr,
		Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{plat}, Size: 24 << 20, Binary: true}},
	}}}, registrytest.Options{})
	info, ok := w.w.Registry.ProviderPackage(addr, "1.0.0", plat)
	if !ok {
		t.Fatal("no package")
	}
	if info.Size < 8<<20 {
		t.Fatalf("the package is %d bytes, too small to be streamed", info.Size)
	}
	zip := fmt.Sprintf("/files/providers/%s/1.0.0/%s", addr, info.Filename)
	tf := fmt.Sprintf("terraform {\n  required_providers {\n    large = {\n      source  = %q\n      version = \"1.0.0\"\n    }\n  }\n}\n", addr)

	before := w.w.Registry.RequestsTo(zip)
	mine, theirs := w.bothFresh(tofu, tf)
	if !bytes.Equal(mine, theirs) {
		t.Errorf("lock files differ\n--- tflock\n%s\n--- tofu\n%s", mine, theirs)
	}
	if !bytes.Contains(mine, []byte(info.H1)) || !bytes.Contains(mine, []byte(info.ZH)) {
		t.Errorf("tflock's lock lacks the package's %s or %s:\n%s", info.H1, info.ZH, mine)
	}
	// tflock's download and its ranged request for the end, then tofu's
	// download.
	if n := w.w.Registry.RequestsTo(zip) - before; n != 3 {
		t.Errorf("%d requests for the zip, want 3 (tflock's two, tofu's one)", n)
	}

	// tflock installs, then tofu checks that install against the lock.
	w.removeInstall()
	w.removeCache()
	w.tflock(0)
	w.run(0, tofu, "init", "-input=false", "-no-color", "-lockfile=readonly")
}
