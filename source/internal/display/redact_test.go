package display

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := map[string]string{
		"https://alice:pw@example.com/x.git":               "https://REDACTED@example.com/x.git",
		"https://token@example.com/x":                      "https://REDACTED@example.com/x",
		"ssh://git@example.com/x.git":                      "ssh://git@example.com/x.git",
		"git::ssh://git:pw@example.com/x.git":              "git::ssh://REDACTED@example.com/x.git",
		"git::https://example.com/x?a=1&sshkey=QUJD/+=":    "git::https://example.com/x?a=1&sshkey=REDACTED",
		"git::https://example.com/x?sshkey=QUJD%3D&ref=v1": "git::https://example.com/x?sshkey=REDACTED&ref=v1",
		"fetch https://u:p@a/x and https://b/y?q=a@b":      "fetch https://REDACTED@a/x and https://b/y?q=a@b",
		// git quotes URLs in its messages.
		"fatal: unable to access 'http://alice:tok@127.0.0.1:1/net.git/': Failed": "fatal: unable to access 'http://REDACTED@127.0.0.1:1/net.git/': Failed",
		"fatal: repository 'http://alice:tok@h' not found":                        "fatal: repository 'http://REDACTED@h' not found",
		// Go's url.Error quotes URLs with password masked, user name shown.
		`Get "https://alice:xxxxx@h/x": EOF`: `Get "https://REDACTED@h/x": EOF`,
		"a git::http://u:p@h/x 1.0.0 @abc":   "a git::http://REDACTED@h/x 1.0.0 @abc",
		"sshkey=notanargument":               "sshkey=notanargument",
		// ModulePackage.String appends "?ref=" to a source with a query.
		"git::http://h/x?sshkey=QUJD?ref=v1": "git::http://h/x?sshkey=REDACTED?ref=v1",
		"'https://u:p'w@h/x'":                "'https://REDACTED@h/x'",
		"x?asshkey=1":                        "x?asshkey=1",
		"no url here":                        "no url here",
		"":                                   "",
	}
	for in, want := range tests {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStripCredentials(t *testing.T) {
	tests := map[string]string{
		"git::https://alice:pw@example.com/x.git":               "git::https://example.com/x.git",
		"git::https://token@example.com/x.git":                  "git::https://example.com/x.git",
		"git::ssh://git@example.com/x.git":                      "git::ssh://git@example.com/x.git",
		"git::ssh://deploy:pw@example.com/x.git":                "git::ssh://deploy@example.com/x.git",
		"git::ssh://example.com/x.git?sshkey=QUJD":              "git::ssh://example.com/x.git",
		"git::ssh://example.com/x.git?depth=1&sshkey=QUJD%3D":   "git::ssh://example.com/x.git?depth=1",
		"git::ssh://example.com/x.git?sshkey=QUJD&depth=1":      "git::ssh://example.com/x.git?depth=1",
		"git::ssh://example.com/x.git?a=1&sshkey=QUJD&depth=1":  "git::ssh://example.com/x.git?a=1&depth=1",
		"git::http://u:p@h/x?sshkey=QUJD 1.0.0 @0123abc":        "git::http://h/x 1.0.0 @0123abc",
		"git::http://u:p@h/x.git?ref=v1":                        "git::http://h/x.git?ref=v1",
		"https://u:p@h/m.zip?archive=zip":                       "https://h/m.zip?archive=zip",
		"registry.example.test/acme/vpc/cloud 1.0.0":            "registry.example.test/acme/vpc/cloud 1.0.0",
		"registry.example.test/acme/cloud 1.1.0 linux_amd64":    "registry.example.test/acme/cloud 1.1.0 linux_amd64",
		"oci://example.com/modules/storage":                     "oci://example.com/modules/storage",
		"git::https://example.com/x.git//sub?ref=v1&sshkey=KEY": "git::https://example.com/x.git//sub?ref=v1",
	}
	for in, want := range tests {
		if got := StripCredentials(in); got != want {
			t.Errorf("StripCredentials(%q) = %q, want %q", in, got, want)
		}
	}
	// Two addresses that differ only by credentials are one.
	a := StripCredentials("git::https://alice:one@example.com/x.git?sshkey=QUJD")
	b := StripCredentials("git::https://bob:two@example.com/x.git")
	if a != b {
		t.Errorf("%q and %q differ", a, b)
	}
}

func TestURL(t *testing.T) {
	u, err := url.Parse("https://alice:pw@example.com/v1/x.zip?X-Amz-Signature=abc#frag")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := URL(u), "https://example.com/v1/x.zip"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if URL(nil) != "" {
		t.Error("URL(nil) is not empty")
	}
}

func TestURLSecrets(t *testing.T) {
	got := URLSecrets("git::https://al%20ice:p%2Fw@example.com/x.git?ref=v1&sshkey=QUJD%2B%3D")
	for _, want := range []string{"al ice", "al%20ice", "p/w", "p%2Fw", "QUJD%2B%3D", "QUJD+="} {
		if !slices.Contains(got, want) {
			t.Errorf("URLSecrets lacks %q: %q", want, got)
		}
	}
	if got := URLSecrets("ssh://git@example.com/x.git"); len(got) != 0 {
		t.Errorf("an ssh user name is not a secret: %q", got)
	}
	if got := URLSecrets("https://example.com/x"); len(got) != 0 {
		t.Errorf("no secrets expected: %q", got)
	}
}

func TestScrub(t *testing.T) {
	secrets := URLSecrets("https://alice:tok%2Fen@example.com/x.git")
	// A message quoting the password decoded, and the URL as given.
	msg := "auth failed for alice with tok/en at https://alice:tok%2Fen@example.com/x.git"
	got := Scrub(msg, secrets)
	for _, s := range []string{"alice", "tok/en", "tok%2Fen"} {
		if strings.Contains(got, s) {
			t.Errorf("Scrub left %q: %s", s, got)
		}
	}
	// Short secrets are left to Redact.
	if got := Scrub("a b c", []string{"a"}); got != "a b c" {
		t.Errorf("Scrub garbled the text: %q", got)
	}
}

// FuzzRedact: no credential of a URL survives, whatever surrounds it.
func FuzzRedact(f *testing.F) {
	f.Add("prefix ", "user", "pass", " suffix")
	f.Add("'", "u", "p'w", "'")
	f.Fuzz(func(t *testing.T, before, user, pass, after string) {
		if pass == "" || strings.ContainsAny(pass, "/?#@ \t\r\n\"<>`:") || strings.ContainsAny(user, "/?#@ \t\r\n\"<>`") || user == "" {
			return
		}
		if strings.ContainsAny(before, "/?#@:") {
			return
		}
		in := before + "https://" + user + ":" + pass + "@host.example/x" + after
		// The password may also be part of the rest of the text, or of
		// what replaces it.
		if got := Redact(in); strings.Count(got, pass) > strings.Count(before+"https://REDACTED@host.example/x"+after, pass) {
			t.Errorf("Redact(%q) = %q keeps the password", in, got)
		}
		if got := StripCredentials(in); strings.Count(got, pass) > strings.Count(before+"https://host.example/x"+after, pass) {
			t.Errorf("StripCredentials(%q) = %q keeps the password", in, got)
		}
	})
}

// The credentials go-getter's S3 getter takes from an address's query are
// secrets: shown redacted, kept stripped.
func TestS3CredentialArgs(t *testing.T) {
	const addr = "s3::https://s3.amazonaws.com/b/k.zip?aws_access_key_id=AKID&aws_access_key_secret=SECRETKEY&aws_access_token=TOKEN1&version=1"
	if got, want := Redact(addr), "s3::https://s3.amazonaws.com/b/k.zip?aws_access_key_id=REDACTED&aws_access_key_secret=REDACTED&aws_access_token=REDACTED&version=1"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if got, want := Redact("s3::bucket.s3.amazonaws.com/k?aws_access_key_secret=SECRETKEY"), "s3::bucket.s3.amazonaws.com/k?aws_access_key_secret=REDACTED"; got != want {
		t.Errorf("Redact without a scheme = %q, want %q", got, want)
	}
	if got, want := StripCredentials(addr), "s3::https://s3.amazonaws.com/b/k.zip?version=1"; got != want {
		t.Errorf("StripCredentials = %q, want %q", got, want)
	}
	if got := URLSecrets(addr); !slices.Contains(got, "SECRETKEY") || !slices.Contains(got, "TOKEN1") {
		t.Errorf("URLSecrets = %q", got)
	}
}

// A signed URL's signature, credential and session token (a registry's
// download location, an X-Terraform-Get answer) are never shown in a
// message, but stay in a record: they are part of the address the package
// is fetched from.
func TestSignedURLArgs(t *testing.T) {
	const addr = "https://bucket.s3.amazonaws.com/m.zip?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20261202&X-Amz-Security-Token=SESSIONTOKEN&X-Amz-Signature=SIGVALUE"
	got := Redact("downloading " + addr + " failed")
	for _, secret := range []string{"AKIDEXAMPLE", "SESSIONTOKEN", "SIGVALUE"} {
		if strings.Contains(got, secret) {
			t.Errorf("Redact = %q shows %s", got, secret)
		}
	}
	if !strings.Contains(got, "X-Amz-Algorithm=AWS4-HMAC-SHA256") || !strings.Contains(got, "X-Amz-Signature=REDACTED") {
		t.Errorf("Redact = %q, want the other arguments kept and the signature marked", got)
	}
	if got := Redact("https://acct.blob.core.windows.net/c/m.zip?sv=2022-11-02&sig=AZURESIG"); strings.Contains(got, "AZURESIG") || !strings.Contains(got, "sv=2022-11-02") {
		t.Errorf("Redact of a SAS URL = %q", got)
	}
	if got := StripCredentials(addr); got != addr {
		t.Errorf("StripCredentials = %q, want the address unchanged", got)
	}
	if got := URLSecrets(addr); !slices.Contains(got, "SIGVALUE") || !slices.Contains(got, "SESSIONTOKEN") {
		t.Errorf("URLSecrets = %q, want the signature and the token", got)
	}
}
