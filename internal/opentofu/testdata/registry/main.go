// Command registry serves the provider registry of internal/opentofu's
// end-to-end runs: source/registry/registrytest's real registry protocol,
// on loopback, for two hosts (registry.example.test, whose providers are
// signed, and registry.opentofu.org, which also serves an unsigned one).
// It writes, into the directory given, the server's certificate
// (certs.pem, for SSL_CERT_FILE) and a CLI configuration (cli.tfrc)
// whose host blocks send both hosts to it, then "ready" on standard
// output, and serves until its standard input is closed.
package main

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/tflock/tflock/source/registry/registrytest"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: registry DIR")
	}
	dir := os.Args[1]
	three := []string{"linux_amd64", "darwin_arm64", "windows_amd64"}
	fx := registrytest.Fixtures{Providers: []registrytest.Provider{
		{Addr: "registry.example.test/example/alpha", Versions: []registrytest.ProviderVersion{
			{Version: "1.0.0", Platforms: three}, {Version: "1.1.0", Platforms: three},
		}},
		{Addr: "registry.opentofu.org/example/unsigned", Unsigned: true, Versions: []registrytest.ProviderVersion{
			{Version: "0.3.0", Platforms: three},
		}},
	}}
	// One server per host: a server answers its loopback address as its
	// first host, and the host blocks send each host to its server.
	var certs, cfg bytes.Buffer
	for _, h := range []string{"registry.example.test", "registry.opentofu.org"} {
		var hfx registrytest.Fixtures
		for _, p := range fx.Providers {
			if strings.HasPrefix(p.Addr, h+"/") {
				hfx.Providers = append(hfx.Providers, p)
			}
		}
		srv, err := registrytest.Start(hfx, registrytest.Options{Hosts: []string{h}, Packages: os.Getenv("REGISTRY_PACKAGES") == "1"})
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		if err := pem.Encode(&certs, &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}); err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(&cfg, "host %q {\n  services = {\n    \"providers.v1\" = \"%s/v1/providers/\"\n  }\n}\n", h, srv.URL)
	}
	if err := os.WriteFile(filepath.Join(dir, "certs.pem"), certs.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cli.tfrc"), cfg.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}
