package display

import (
	"net/url"
	"slices"
	"strings"
)

// This file holds every decision about credentials in text: what a message
// may show ([Redact]), what a record that is kept may hold
// ([StripCredentials]), how a request URL is shown ([URL]) and which
// literal secrets an address carries ([URLSecrets], [Scrub]). Events,
// errors, log lines, cache records and lock files all go through it.
//
// The credentials an address can carry are the user information of a URL
// ("https://user:token@host/...", where over HTTP a user name alone is
// often a token), git's "sshkey" argument (a base64 private key, as
// go-getter takes it) and the S3 getter's "aws_access_key_id",
// "aws_access_key_secret" and "aws_access_token" arguments; a message
// also hides the signature, credential and token arguments of a signed URL
// (S3's "X-Amz-Signature", Azure's "sig", ...), which stay in a record. The
// user name of an ssh URL is not a secret: it is part of the address
// ("ssh://git@host/...").

// Redacted replaces a secret in messages.
const Redacted = "REDACTED"

// secretArgs are the query arguments whose values are secrets: git's
// "sshkey", and the credentials go-getter's S3 getter takes from an
// "s3::" address (an address tflock does not fetch, but names in the
// error that says so, and which a registry may answer with).
var secretArgs = []string{"sshkey", "aws_access_key_id", "aws_access_key_secret", "aws_access_token"}

// signedURLArgs are the query arguments of a signed (pre-authorised) URL
// whose values grant access: S3's and Google Cloud Storage's signatures,
// credentials and session tokens, and an Azure SAS token's signature. A
// registry's download location or an X-Terraform-Get answer may be such a
// URL. Messages show them redacted ([Redact], [URLSecrets]); a record
// that is kept ([StripCredentials]) keeps them, since they are part of
// the address the package is fetched from.
var signedURLArgs = []string{"X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "X-Goog-Signature", "X-Goog-Credential", "sig"}

// shownArgs are the arguments whose values a message never shows.
var shownArgs = append(slices.Clone(secretArgs), signedURLArgs...)

// hasSecretArg reports whether s may hold one of the arguments names.
func hasSecretArg(s string, names []string) bool {
	for _, name := range names {
		if strings.Contains(s, name+"=") {
			return true
		}
	}
	return false
}

// authorityEnd are the bytes that end the authority of a URL in text:
// the start of a path, query or fragment, white space, and the quotes
// that user information cannot hold unencoded. A single quote can be
// part of a password, so it does not end the authority: "'http://u:p@h'"
// is still redacted.
const authorityEnd = "/?# \t\r\n\"<>`"

// Redact returns s, free text such as a message, with the credentials of
// every URL in it replaced by [Redacted]: the user information of
// "scheme://user:password@host" (kept only when it is the plain user name
// "git" of an ssh address, "ssh://git@host") and the value of any secret
// argument ("sshkey", an S3 credential) or signed-URL argument (a
// signature, a session token). The result says that there were credentials without showing
// them; it is not a usable address.
func Redact(s string) string {
	if !strings.Contains(s, "://") && !hasSecretArg(s, shownArgs) {
		return s
	}
	return eachURL(s, shownArgs, func(b *strings.Builder, scheme, userinfo string) {
		if userinfo == "git" {
			b.WriteString("git@")
		} else {
			b.WriteString(Redacted + "@")
		}
	}, func(b *strings.Builder, name, value string) {
		b.WriteString(name + "=")
		if value != "" {
			b.WriteString(Redacted)
		}
	})
}

// StripCredentials returns s with the credentials of every URL in it
// removed, for text that is kept: a lock file's source, a cache key or
// record. An ssh URL keeps its user name and loses any password; any
// other URL loses its whole user information; a secret argument
// ("sshkey", an S3 credential) is removed. Two addresses that differ only by their credentials give the
// same result.
func StripCredentials(s string) string {
	if !strings.Contains(s, "://") && !hasSecretArg(s, secretArgs) {
		return s
	}
	return eachURL(s, secretArgs, func(b *strings.Builder, scheme, userinfo string) {
		if strings.EqualFold(scheme, "ssh") {
			user, _, _ := strings.Cut(userinfo, ":")
			if user != "" {
				b.WriteString(user + "@")
			}
		}
	}, nil)
}

// eachURL copies s, calling user for the user information of every URL
// (without its "@"; user writes what replaces it, "@" included) and arg
// for every secret query argument (nil: the argument and its separator are
// left out).
func eachURL(s string, names []string, user func(b *strings.Builder, scheme, userinfo string), arg func(b *strings.Builder, name, value string)) string {
	var b strings.Builder
	b.Grow(len(s))
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		scheme := rest[:i]
		if j := strings.LastIndex(scheme, "::"); j >= 0 {
			scheme = scheme[j+2:] // a go-getter forced getter: "git::ssh://"
		}
		if j := strings.LastIndexFunc(scheme, func(r rune) bool { return !isSchemeByte(r) }); j >= 0 {
			scheme = scheme[j+1:]
		}
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		end := strings.IndexAny(rest, authorityEnd)
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			user(&b, scheme, rest[:at])
			rest = rest[at+1:]
		}
	}
	b.WriteString(rest)
	return secretQueryArgs(b.String(), names, arg)
}

func isSchemeByte(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'
}

// secretQueryArgs rewrites every argument "NAME=VALUE" of names that
// follows a "?" or "&" in s: arg writes its replacement, or, when arg is nil, the
// argument is removed with one of its separators.
func secretQueryArgs(s string, names []string, arg func(b *strings.Builder, name, value string)) string {
	for _, name := range names {
		key := name + "="
		if !strings.Contains(s, key) {
			continue
		}
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			if i == 0 || rest[i-1] != '?' && rest[i-1] != '&' {
				b.WriteString(rest[:i+len(key)])
				rest = rest[i+len(key):]
				continue
			}
			end := strings.IndexAny(rest[i+len(key):], "&#? \t\r\n\"'<>`")
			if end < 0 {
				end = len(rest) - i - len(key)
			}
			value := rest[i+len(key) : i+len(key)+end]
			after := rest[i+len(key)+end:]
			if arg != nil {
				b.WriteString(rest[:i])
				arg(&b, name, value)
				rest = after
				continue
			}
			// Remove the argument: "?sshkey=K&x" becomes "?x", "&sshkey=K"
			// goes entirely, "?sshkey=K" loses its "?" too.
			if strings.HasPrefix(after, "&") {
				b.WriteString(rest[:i])
				rest = after[1:]
			} else {
				b.WriteString(rest[:i-1])
				rest = after
			}
		}
		b.WriteString(rest)
		s = b.String()
	}
	return s
}

// URL returns u for messages about a request: without user information,
// query or fragment, which may hold credentials or signatures.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.ForceQuery = false
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}

// URLSecrets returns the literal secrets a URL (or module address) carries,
// in every spelling a message may use: the password of its user
// information and, but for an ssh URL, the user name, plain and
// percent-encoded, and the value of any secret argument ("sshkey", an S3
// credential) or signed-URL argument (a signature, a session token). Text that may quote them in a form [Redact] does not
// recognise, such as the output of another program, goes through [Scrub]
// with them.
func URLSecrets(raw string) []string {
	var out []string
	add := func(s string) {
		if s == "" || slices.Contains(out, s) {
			return
		}
		out = append(out, s)
		for _, e := range []string{url.PathEscape(s), url.QueryEscape(s)} {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	rest := raw
	if i := strings.Index(rest, "::"); i >= 0 && !strings.Contains(rest[:i], "/") {
		rest = rest[i+2:] // a forced getter
	}
	if u, err := url.Parse(rest); err == nil {
		if u.User != nil {
			if !strings.EqualFold(u.Scheme, "ssh") {
				add(u.User.Username()) // over ssh, part of the address
			}
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
		}
		for _, kv := range strings.Split(u.RawQuery, "&") {
			name, v, _ := strings.Cut(kv, "=")
			if slices.Contains(shownArgs, name) {
				add(v)
				if dec, err := url.QueryUnescape(v); err == nil {
					add(dec)
				}
			}
		}
	}
	return out
}

// Scrub returns s with every occurrence of each secret replaced by
// [Redacted], and then [Redact]ed. Secrets shorter than four bytes are
// left to Redact alone: replacing them everywhere would garble the text
// without hiding anything worth hiding.
func Scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return Redact(s)
}
