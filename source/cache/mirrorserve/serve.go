package mirrorserve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"time"
)

// ServeOptions configure [Start].
type ServeOptions struct {
	// Addr is the loopback address to listen on. Default "127.0.0.1:0":
	// a free port. An address that is not a loopback one is refused: the
	// mirror serves this machine only.
	Addr string
	// Prefix is the path the handler is mounted under, with a leading and
	// a trailing slash. Default "/providers/".
	Prefix string
}

// Server is a mirror served on loopback HTTPS by [Start].
type Server struct {
	// URL is the mirror's base URL, with the trailing slash that tofu's
	// network_mirror url needs ("https://127.0.0.1:PORT/providers/").
	URL string
	// CertPEM is the server's self-signed certificate, PEM-encoded: the
	// one certificate a client must trust (see [WriteToolConfig]).
	CertPEM []byte

	srv  *http.Server
	done chan error
}

// Start serves h on loopback HTTPS with a certificate of its own, made now
// (ECDSA P-256, for 127.0.0.1, ::1 and localhost, valid for a year), until
// Close. The server's errors after it started are returned by Close.
func Start(ctx context.Context, h http.Handler, opts ServeOptions) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Prefix == "" {
		opts.Prefix = "/providers/"
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("mirrorserve: listen address %q: %w", opts.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("mirrorserve: listen address %q is not a loopback address", opts.Addr)
	}
	cert, certPEM, err := selfSigned()
	if err != nil {
		return nil, fmt.Errorf("mirrorserve: certificate: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("mirrorserve: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(opts.Prefix, http.StripPrefix(opts.Prefix[:len(opts.Prefix)-1], h))
	s := &Server{
		URL:     "https://" + ln.Addr().String() + opts.Prefix,
		CertPEM: certPEM,
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 30 * time.Second,
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.ServeTLS(ln, "", "") }()
	return s, nil
}

// Close stops the server at once, ending the requests in progress.
func (s *Server) Close() error {
	err := s.srv.Close()
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// selfSigned makes a certificate for the loopback names.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "tflock provider mirror"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}
