package oci

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Credential is what a registry is given to authenticate a request. The
// zero value means anonymous access.
type Credential struct {
	// Username is the user name given to the registry with Password, or "".
	Username string
	// Password is the password (or a token) given with Username, or "".
	Password string
	// IdentityToken is an OAuth2 refresh token (docker's "identitytoken").
	IdentityToken string
	// AccessToken is a bearer token used as it is.
	AccessToken string
}

// IsZero reports whether c carries no credential (anonymous access).
func (c Credential) IsZero() bool { return c == Credential{} }

// CredentialError reports a credential configuration that could not be
// used: an unreadable or malformed config file, or a failing credential
// helper. It never holds a secret.
type CredentialError struct {
	Repository string // "host/repository" the credential was for
	Location   string // the config file or the helper program
	Err        error  // the cause
}

// Error names the repository and where the credential came from, and gives the cause.
func (e *CredentialError) Error() string {
	return fmt.Sprintf("credentials for %s from %s: %v", e.Repository, e.Location, e.Err)
}

// Unwrap returns the cause.
func (e *CredentialError) Unwrap() error { return e.Err }

// DefaultConfigFiles returns the docker/containers-style credential files
// that OpenTofu searches, in its order, for an environment given by getenv
// (usually os.Getenv) and an operating system name (usually runtime.GOOS):
//
//	$XDG_RUNTIME_DIR/containers/auth.json   (Linux only)
//	$HOME/.config/containers/auth.json      (Windows and macOS only)
//	$XDG_CONFIG_HOME/containers/auth.json   (XDG_CONFIG_HOME defaults to $HOME/.config)
//	$HOME/.docker/config.json
//	$HOME/.dockercfg
//
// Entries whose variables are unset are left out. Files need not exist.
func DefaultConfigFiles(getenv func(string) string, goos string) []string {
	home := getenv("HOME")
	if home == "" && goos == "windows" {
		home = getenv("USERPROFILE")
	}
	var out []string
	if goos == "linux" {
		if d := getenv("XDG_RUNTIME_DIR"); d != "" {
			out = append(out, filepath.Join(d, "containers", "auth.json"))
		}
	}
	if (goos == "windows" || goos == "darwin") && home != "" {
		out = append(out, filepath.Join(home, ".config", "containers", "auth.json"))
	}
	cfg := getenv("XDG_CONFIG_HOME")
	if cfg == "" && home != "" {
		cfg = filepath.Join(home, ".config")
	}
	if cfg != "" {
		p := filepath.Join(cfg, "containers", "auth.json")
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".docker", "config.json"), filepath.Join(home, ".dockercfg"))
	}
	return out
}

// configFile is the part of a docker/containers config file this package reads.
type configFile struct {
	Auths       map[string]authEntry `json:"auths"`
	CredHelpers map[string]string    `json:"credHelpers"`
	CredsStore  string               `json:"credsStore"`
}

type authEntry struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

func (a authEntry) empty() bool {
	return a.Auth == "" && a.Username == "" && a.Password == "" && a.IdentityToken == "" && a.RegistryToken == ""
}

// credCandidate is one configured way to get a credential for a repository.
type credCandidate struct {
	file        string
	key         string // the matched pattern, "host" or "host/ns/..."
	specificity int    // number of path segments in key; -1 for a global credsStore
	entry       *authEntry
	helper      string
}

// normalizeKey turns a config key ("https://host/v1/", "host/ns") into a
// pattern "host" or "host/ns".
func normalizeKey(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k = strings.TrimSuffix(k, "/")
	if host, path, ok := strings.Cut(k, "/"); ok && (path == "v1" || path == "v2") {
		k = host // docker's "https://index.docker.io/v1/" style
	}
	return k
}

// matchSpecificity reports how specifically pattern matches repo ("host/a/b"):
// the number of path segments of pattern, or -1 if it does not match.
func matchSpecificity(pattern, repo string) int {
	if pattern == "" {
		return -1
	}
	if pattern != repo && !strings.HasPrefix(repo, pattern+"/") {
		return -1
	}
	return strings.Count(pattern, "/")
}

// credential finds the credential for repo: the explicit function when
// set, else the most specific match across the config files (the earlier
// file wins between equally specific ones), else anonymous.
func (s *Source) credential(ctx context.Context, repo string) (Credential, error) {
	if s.opts.Credentials != nil {
		return s.opts.Credentials(ctx, repo)
	}
	var best *credCandidate
	for _, file := range s.opts.ConfigFiles {
		cands, err := readConfigCandidates(file, repo)
		if err != nil {
			return Credential{}, &CredentialError{Repository: repo, Location: file, Err: err}
		}
		for i := range cands {
			if best == nil || cands[i].specificity > best.specificity {
				best = &cands[i]
			}
		}
	}
	if best == nil {
		return Credential{}, nil
	}
	if best.helper != "" {
		host, _, _ := strings.Cut(repo, "/")
		c, err := s.runHelper(ctx, best.helper, host)
		if err != nil {
			return Credential{}, &CredentialError{Repository: repo, Location: "docker-credential-" + best.helper + " (configured in " + best.file + ")", Err: err}
		}
		return c, nil
	}
	c, err := best.entry.credential()
	if err != nil {
		return Credential{}, &CredentialError{Repository: repo, Location: best.file + " (entry " + best.key + ")", Err: err}
	}
	return c, nil
}

func (a authEntry) credential() (Credential, error) {
	c := Credential{Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken, AccessToken: a.RegistryToken}
	if a.Auth != "" {
		b, err := base64.StdEncoding.DecodeString(a.Auth)
		if err != nil {
			return Credential{}, errors.New(`the "auth" value is not valid base64`)
		}
		user, pass, ok := strings.Cut(string(b), ":")
		if !ok {
			return Credential{}, errors.New(`the "auth" value must encode "username:password"`)
		}
		c.Username, c.Password = user, pass
	}
	return c, nil
}

// readConfigCandidates reads one config file and returns what in it
// matches repo. A missing file has no candidates.
func readConfigCandidates(file, repo string) ([]credCandidate, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cfg configFile
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("not a valid credentials file: %v", err)
	}
	if cfg.Auths == nil && cfg.CredHelpers == nil && cfg.CredsStore == "" {
		// The legacy ~/.dockercfg form: the auths map at the top level.
		var legacy map[string]authEntry
		if json.Unmarshal(data, &legacy) == nil {
			cfg.Auths = legacy
		}
	}
	var out []credCandidate
	helperHosts := map[string]bool{}
	for k, h := range cfg.CredHelpers {
		key := normalizeKey(k)
		if sp := matchSpecificity(key, repo); sp >= 0 && h != "" {
			out = append(out, credCandidate{file: file, key: key, specificity: sp, helper: h})
			helperHosts[key] = true
		}
	}
	for k, a := range cfg.Auths {
		key := normalizeKey(k)
		sp := matchSpecificity(key, repo)
		if sp < 0 || helperHosts[key] {
			continue // credHelpers take precedence for their host
		}
		switch {
		case !a.empty():
			a := a
			out = append(out, credCandidate{file: file, key: key, specificity: sp, entry: &a})
		case cfg.CredsStore != "":
			// Docker leaves an empty entry as a marker for the store.
			out = append(out, credCandidate{file: file, key: key, specificity: sp, helper: cfg.CredsStore})
		}
	}
	if cfg.CredsStore != "" {
		out = append(out, credCandidate{file: file, key: "", specificity: -1, helper: cfg.CredsStore})
	}
	// Deterministic order: most specific first, then by key; the caller
	// keeps the first of equal specificity.
	sortCandidates(out)
	return out, nil
}

func sortCandidates(c []credCandidate) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && (c[j].specificity > c[j-1].specificity || c[j].specificity == c[j-1].specificity && c[j].key < c[j-1].key); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// helperOutput is the JSON a docker credential helper prints for "get".
type helperOutput struct {
	ServerURL string `json:"ServerURL"`
	Username  string `json:"Username"`
	Secret    string `json:"Secret"`
}

// runHelper runs "docker-credential-<name> get" with the server host on
// standard input, as the docker credential helper protocol defines.
func (s *Source) runHelper(ctx context.Context, name, host string) (Credential, error) {
	if strings.ContainsAny(name, `/\`) || name == "" {
		return Credential{}, fmt.Errorf("invalid credential helper name %q", name)
	}
	lookPath := s.opts.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	prog, err := lookPath("docker-credential-" + name)
	if err != nil {
		return Credential{}, fmt.Errorf("credential helper not found: %w", err)
	}
	cmd := exec.CommandContext(ctx, prog, "get")
	cmd.Stdin = strings.NewReader(host)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stdout.String())
		if strings.Contains(msg, "credentials not found") {
			return Credential{}, nil // the helper knows nothing: anonymous
		}
		if msg == "" {
			msg = strings.TrimSpace(stderr.String())
		}
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return Credential{}, fmt.Errorf("%v: %s", err, msg)
	}
	var out helperOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return Credential{}, errors.New("the helper's output is not the JSON object the credential helper protocol defines")
	}
	if out.Username == "<token>" {
		return Credential{IdentityToken: out.Secret}, nil
	}
	return Credential{Username: out.Username, Password: out.Secret}, nil
}
