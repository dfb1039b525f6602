package mirrorserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/source/cliconfig"
)

// ToolConfigOptions configure [WriteToolConfig].
type ToolConfigOptions struct {
	// User is the user's CLI configuration (cliconfig.Load, or
	// resolve/install's Sources.Config): its host blocks, plugin cache
	// directory and dev overrides are kept. Its provider_installation
	// methods are not: the mirror serves what they serve. Nil: none.
	User *cliconfig.Config
	// TrustAllHashes writes trust_all_hashes = true in the network_mirror
	// block: OpenTofu (1.10 and later) then records in the lock file the
	// hashes the mirror lists for every platform, for the providers of
	// its default registry, so that a lock file it writes is complete;
	// it then also adds them to an existing lock file that lacks them.
	// Terraform does not know the argument (1.11 ignores it).
	TrustAllHashes bool
	// KeepCredentials keeps the credentials blocks of User and, in
	// [ToolConfig.Environ], the TF_TOKEN_ variables, for a tool that still
	// talks to a registry itself (modules). Default false: no credential
	// reaches the tool; the mirror holds the origins' credentials.
	KeepCredentials bool
	// Token is the mirror's token ([Options.Token]), written as the
	// credentials of the mirror's host so that the tool sends it.
	Token string
	// RootsFile is the certificate bundle the tool trusts besides the
	// mirror's certificate, so that it still reaches other HTTPS hosts.
	// Default: the SSL_CERT_FILE of the environment, else the first of
	// the usual system bundles that exists (none: only the mirror's).
	RootsFile string
}

// ToolConfig is what [WriteToolConfig] wrote.
type ToolConfig struct {
	// ConfigFile is the CLI configuration, for TF_CLI_CONFIG_FILE.
	ConfigFile string
	// CertFile is the certificate bundle, for SSL_CERT_FILE.
	CertFile   string
	keepTokens bool
}

// systemBundles are the usual places of the system's root certificates
// (Go's crypto/x509 looks there on Linux and the BSDs).
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// WriteToolConfig writes into dir (created if missing) the files that point
// tofu and terraform at the mirror whose base URL is mirrorURL and whose
// certificate is certPEM (see [Server]): "tofurc", a whole CLI
// configuration with one provider_installation block (a network_mirror,
// and the user's dev_overrides), the user's host blocks and plugin cache
// settings; and "certs.pem", the mirror's certificate followed by the
// roots the tool trusted before. Since TF_CLI_CONFIG_FILE names the only
// file tofu reads, a user configuration with its own provider_installation
// block is replaced, not added to (tofu refuses two).
//
// On macOS and Windows, Go programs such as tofu verify certificates with
// the system's verifier and ignore SSL_CERT_FILE: there the mirror's
// certificate must be trusted by the system.
func WriteToolConfig(dir, mirrorURL string, certPEM []byte, opts ToolConfigOptions) (*ToolConfig, error) {
	if !strings.HasPrefix(mirrorURL, "https://") || !strings.HasSuffix(mirrorURL, "/") {
		return nil, fmt.Errorf("mirrorserve: mirror URL %q: tofu needs an https URL ending in a slash", mirrorURL)
	}
	mu, err := url.Parse(mirrorURL)
	if err != nil {
		return nil, fmt.Errorf("mirrorserve: mirror URL: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("# Written by tflock: providers come from its verified mirror.\n")
	if u := opts.User; u != nil {
		for _, h := range sortedKeys(u.Hosts) {
			fmt.Fprintf(&b, "\nhost %s {\n  services = %s\n}\n", quote(h), hclValue(u.Hosts[h].Services, "  "))
		}
		if opts.KeepCredentials {
			for _, h := range sortedKeys(u.Credentials) {
				if tok := u.Token(h); tok != "" {
					fmt.Fprintf(&b, "\ncredentials %s {\n  token = %s\n}\n", quote(h), quote(tok))
				}
			}
		}
		if u.PluginCacheDir != "" {
			fmt.Fprintf(&b, "\nplugin_cache_dir = %s\n", quote(u.PluginCacheDir))
		}
		if u.PluginCacheMayBreakDependencyLockFile {
			b.WriteString("plugin_cache_may_break_dependency_lock_file = true\n")
		}
	}
	if opts.Token != "" {
		fmt.Fprintf(&b, "\ncredentials %s {\n  token = %s\n}\n", quote(mu.Host), quote(opts.Token))
	}
	b.WriteString("\nprovider_installation {\n")
	if u := opts.User; u != nil && u.ProviderInstallation != nil && len(u.ProviderInstallation.DevOverrides) > 0 {
		var lines []string
		for addr, d := range u.ProviderInstallation.DevOverrides {
			lines = append(lines, fmt.Sprintf("    %s = %s\n", quote(provaddr.String(addr)), quote(d)))
		}
		slices.Sort(lines)
		// First: tofu refuses dev_overrides after another method.
		b.WriteString("  dev_overrides {\n" + strings.Join(lines, "") + "  }\n")
	}
	fmt.Fprintf(&b, "  network_mirror {\n    url = %s\n", quote(mirrorURL))
	if opts.TrustAllHashes {
		b.WriteString("    trust_all_hashes = true\n")
	}
	b.WriteString("  }\n}\n")

	var certs bytes.Buffer
	certs.Write(certPEM)
	roots := opts.RootsFile
	if roots == "" {
		roots = os.Getenv("SSL_CERT_FILE")
	}
	if roots == "" {
		for _, p := range systemBundles {
			if _, err := os.Stat(p); err == nil {
				roots = p
				break
			}
		}
	}
	if roots != "" {
		r, err := os.ReadFile(roots)
		if err != nil {
			return nil, fmt.Errorf("mirrorserve: root certificates: %w", err)
		}
		certs.WriteByte('\n')
		certs.Write(r)
	}
	t := &ToolConfig{ConfigFile: filepath.Join(dir, "tofurc"), CertFile: filepath.Join(dir, "certs.pem"), keepTokens: opts.KeepCredentials}
	if err := writeAtomic(t.ConfigFile, b.Bytes(), 0o600); err != nil {
		return nil, err
	}
	if err := writeAtomic(t.CertFile, certs.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return t, nil
}

// Environ returns base (an environment, "NAME=VALUE") with the variables
// that point tofu at the mirror set (TF_CLI_CONFIG_FILE, SSL_CERT_FILE),
// and those that would name another CLI configuration (TERRAFORM_CONFIG) or
// carry an origin's credentials (TF_TOKEN_*, unless KeepCredentials) left
// out.
func (t *ToolConfig) Environ(base []string) []string {
	var out []string
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "TF_CLI_CONFIG_FILE", name == "TERRAFORM_CONFIG", name == "SSL_CERT_FILE":
			continue
		case strings.HasPrefix(name, "TF_TOKEN_") && !t.keepTokens:
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TF_CLI_CONFIG_FILE="+t.ConfigFile, "SSL_CERT_FILE="+t.CertFile)
}

// quote writes s as an HCL string.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	// No template sequences: the value is taken literally.
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

// hclValue writes a services value (strings, numbers, booleans, lists and
// objects, as cliconfig reads them).
func hclValue(v any, indent string) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case bool:
		return fmt.Sprint(x)
	case int, int64, float64:
		return fmt.Sprint(x)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, hclValue(e, indent))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		var parts []string
		for _, e := range x {
			parts = append(parts, quote(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var b strings.Builder
		b.WriteString("{\n")
		for _, k := range sortedKeys(x) {
			fmt.Fprintf(&b, "%s  %s = %s\n", indent, quote(k), hclValue(x[k], indent+"  "))
		}
		b.WriteString(indent + "}")
		return b.String()
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeAtomic writes a file by renaming a complete temporary file over it.
func writeAtomic(p string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(p), tmpPrefix)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), mode)); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return nil
}
