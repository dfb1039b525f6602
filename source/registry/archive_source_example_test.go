package registry_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
)

func ExampleNewArchiveSource() {
	// An HTTPS server with one module archive, as a module source
	// "https://HOST/network.zip" names it.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("main.tf")
	fmt.Fprintln(w, `variable "cidr" {}`)
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(buf.Bytes())
	}))
	defer srv.Close()

	src := registry.NewArchiveSource(registry.Options{
		HTTPClient:  srv.Client(),
		Credentials: registry.Tokens{}, // no TF_TOKEN_* from this machine
	})
	tmp, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	ctx := context.Background()
	pkg := source.ModulePackage{Source: srv.URL + "/network.zip"}
	f, err := src.Fetch(ctx, pkg, filepath.Join(tmp, "network"))
	if err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(f.Dir, "main.tf"))
	fmt.Print(string(b))
	fmt.Println(f.Hashes) // the dirhash h1 of main.tf, as sha256sum computes it

	// An archive has no versions: a version argument is an error.
	_, err = src.Versions(ctx, pkg)
	fmt.Println(err != nil)
	// Output:
	// variable "cidr" {}
	// [h1:lHnySmZ46GvUJt+kW8fYXgnvAX4I2AnBufcgUHnm67g=]
	// true
}
