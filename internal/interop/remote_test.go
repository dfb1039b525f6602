package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteropRemoteTierTofuOCIMirror: tflock writes what it downloads
// through to a remote cache tier on an OCI registry (over TLS, trusted
// through SSL_CERT_FILE); then plain tofu, whose only provider
// installation method is an oci_mirror with the tier's
// repository_template, installs the providers from it without asking the
// registry: with tflock's lock file in place (the tier's packages verify
// against it, which tofu leaves unchanged), and on an empty directory,
// where the lock tofu writes is byte for byte the one tflock writes with
// the same CLI configuration.
func TestInteropRemoteTierTofuOCIMirror(t *testing.T) {
	tofu := tool(t, "TFLOCK_TOFU", "tofu")
	w := newWorld(t)
	w.config(map[string]string{"main.tf": providersTF})
	out := w.tflock(0, "-remote-cache", "oci://"+w.ociHost+"/fleet")
	if strings.Contains(out, "Warning: remote cache tier") {
		t.Fatalf("tflock could not write the tier:\n%s", out)
	}
	origin := w.read(".terraform.lock.hcl")
	downloads := w.providerDownloads()

	// The CLI configuration with the tier as the only provider source.
	var cliConfig string
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, "TF_CLI_CONFIG_FILE="); ok {
			cliConfig = v
		}
	}
	base, err := os.ReadFile(cliConfig)
	if err != nil {
		t.Fatal(err)
	}
	mirrorConfig := filepath.Join(filepath.Dir(cliConfig), "oci-mirror.tfrc")
	writeFile(t, mirrorConfig, string(base)+`
provider_installation {
  oci_mirror {
    repository_template = "`+w.ociHost+`/fleet/${hostname}/${namespace}/${type}"
  }
}
`)
	for i, kv := range w.env {
		if strings.HasPrefix(kv, "TF_CLI_CONFIG_FILE=") {
			w.env[i] = "TF_CLI_CONFIG_FILE=" + mirrorConfig
		}
	}

	// tofu with tflock's lock: installs from the tier, keeps the lock.
	w.removeInstall()
	writeFile(t, w.path(".terraform.lock.hcl"), string(origin))
	tofuOut := w.run(0, tofu, "init", "-no-color", "-input=false")
	if got := w.read(".terraform.lock.hcl"); !bytes.Equal(got, origin) {
		t.Errorf("tofu changed tflock's lock file installing from the tier:\n--- tflock\n%s\n--- tofu\n%s\n%s", origin, got, tofuOut)
	}
	for _, p := range []string{"registry.example.test/acme/cloud", "registry.example.test/acme/dns"} {
		if _, err := os.Stat(w.path(".terraform/providers/" + p)); err != nil {
			t.Errorf("tofu did not install %s: %v\n%s", p, err, tofuOut)
		}
	}

	// On an empty directory: tofu's lock and tflock's, through the same
	// oci_mirror, are the same bytes.
	w.removeInstall()
	tofuOut = w.run(0, tofu, "init", "-no-color", "-input=false")
	theirs := w.read(".terraform.lock.hcl")
	w.removeInstall()
	out = w.tflock(0)
	mine := w.read(".terraform.lock.hcl")
	if !bytes.Equal(mine, theirs) {
		t.Errorf("locks through the tier's oci_mirror differ\n--- tofu\n%s\n--- tflock\n%s\n%s\n%s", theirs, mine, tofuOut, out)
	}
	if n := w.providerDownloads(); n != downloads {
		t.Errorf("the registry served %d provider downloads after tflock's first run; the tier should have served them all", n-downloads)
	}
}
