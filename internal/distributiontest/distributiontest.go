// Package distributiontest runs the real CNCF distribution registry
// (Debian's docker-registry package, /usr/bin/docker-registry) for a
// test: over TLS on a loopback port, with a certificate made for the
// test, storing into the test's temporary directory.
package distributiontest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tflock/tflock/internal/testcert"
)

// Binary is where Debian's docker-registry package installs the registry.
const Binary = "/usr/bin/docker-registry"

// Registry is a running distribution registry.
type Registry struct {
	// Host is "127.0.0.1:PORT".
	Host string
	// CAFile is a PEM file holding the certificate the registry serves
	// (its own CA), for SSL_CERT_FILE.
	CAFile string
	// Root is the registry's storage directory.
	Root string

	cert *x509.Certificate
	cmd  *exec.Cmd
}

// Path returns the registry program: docker-registry in PATH, else
// [Binary]; "" when neither exists.
func Path() string {
	if p, err := exec.LookPath("docker-registry"); err == nil {
		return p
	}
	if _, err := os.Stat(Binary); err == nil {
		return Binary
	}
	return ""
}

// Start starts a registry for tb and stops it when the test ends. The
// test is skipped, saying why, when the program is not installed.
func Start(tb testing.TB) *Registry {
	tb.Helper()
	bin := Path()
	if bin == "" {
		tb.Skip("the CNCF distribution registry is not installed (apt-get install -y docker-registry; .ci/run installs it): skipping the test against a real registry")
	}
	dir := tb.TempDir()
	cert, err := testcert.SelfSigned("distributiontest", []string{"localhost"})
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		tb.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(tb, certFile, "CERTIFICATE", cert.Certificate[0])
	writePEM(tb, keyFile, "PRIVATE KEY", keyDER)

	r := &Registry{CAFile: certFile, Root: filepath.Join(dir, "storage"), cert: cert.Leaf}
	var lastErr error
	for range 3 { // a port taken between its choice and the start: try another
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		r.Host = fmt.Sprintf("127.0.0.1:%d", port)
		cfg := filepath.Join(dir, "config.yml")
		conf := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  tls:
    certificate: %s
    key: %s
`, r.Root, r.Host, certFile, keyFile)
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			tb.Fatal(err)
		}
		if lastErr = r.start(tb, bin, cfg, dir); lastErr == nil {
			return r
		}
	}
	tb.Fatalf("starting %s: %v", bin, lastErr)
	return nil
}

func (r *Registry) start(tb testing.TB, bin, cfg, dir string) error {
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	client := r.Client()
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logFile.Name())
			return fmt.Errorf("the registry exited: %v\n%s", err, out)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+r.Host+"/v2/", nil)
		resp, err := client.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("the registry did not answer on %s: %v", r.Host, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.cmd = cmd
	tb.Cleanup(stop)
	return nil
}

// Client returns an HTTP client that trusts the registry's certificate.
func (r *Registry) Client() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(r.cert)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	tr.Proxy = nil
	return &http.Client{Transport: tr}
}

// Stop stops the registry now (a test of a registry going away).
func (r *Registry) Stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func writePEM(tb testing.TB, path, typ string, der []byte) {
	tb.Helper()
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}
