package hash

import (
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Scheme is the part of a hash string before the colon, with the colon
// included, as the lock file spells it: "h1:" or "zh:".
type Scheme string

const (
	// SchemeH1 is golang.org/x/mod/sumdb/dirhash Hash1 of the package's
	// files: base64 of the SHA-256 of a summary listing the SHA-256 and name
	// of every file, sorted by name.
	SchemeH1 Scheme = "h1:"
	// SchemeZH is the lower-case hex SHA-256 of the distribution zip archive
	// itself (OpenTofu's "legacy zip hash").
	SchemeZH Scheme = "zh:"
)

// Hash is one recorded package checksum in the form "scheme:value", exactly
// as it appears in a lock file. It is a comparable value, usable as a map key.
//
// A Hash made by [ParseHash] is well formed: an "h1:" value is the base64 of
// 32 bytes, a "zh:" value is 64 lower-case hex digits, and a hash of any other
// scheme is carried opaquely (forward compatibility). Accessors never panic,
// even on a Hash converted from an arbitrary string.
type Hash string

var (
	_ encoding.TextMarshaler   = Hash("")
	_ encoding.TextUnmarshaler = (*Hash)(nil)
)

// ParseHash parses and validates a hash string. Unknown schemes are accepted
// if they have the form "scheme:value" with a non-empty, lower-case
// alphanumeric scheme and a non-empty value; malformed "h1:" and "zh:"
// values are rejected.
func ParseHash(s string) (Hash, error) {
	colon := strings.IndexByte(s, ':')
	if colon < 1 {
		return "", &ParseError{Input: s, Reason: `a hash must have the form "scheme:value", such as "h1:..." or "zh:..."`}
	}
	scheme, value := s[:colon], s[colon+1:]
	for _, r := range scheme {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return "", &ParseError{Input: s, Reason: fmt.Sprintf("the scheme %q must contain only lower-case letters and digits", scheme)}
		}
	}
	if value == "" {
		return "", &ParseError{Input: s, Reason: "the hash value after the colon is empty"}
	}
	switch Scheme(scheme + ":") {
	case SchemeH1:
		b, err := base64.StdEncoding.Strict().DecodeString(value)
		if err != nil || len(b) != 32 {
			return "", &ParseError{Input: s, Reason: "an h1: hash must be the standard base64 encoding of a 32-byte SHA-256 digest"}
		}
	case SchemeZH:
		b, err := hex.DecodeString(value)
		if err != nil || len(b) != 32 || strings.ToLower(value) != value {
			return "", &ParseError{Input: s, Reason: "a zh: hash must be 64 lower-case hexadecimal digits (a SHA-256 digest)"}
		}
	default:
		if strings.ContainsAny(value, " \t\r\n\"") {
			return "", &ParseError{Input: s, Reason: "a hash value must not contain white space or quotes"}
		}
	}
	return Hash(s), nil
}

// MustParseHash is like [ParseHash] but panics on error. It is for hashes
// written in program text, not for input.
func MustParseHash(s string) Hash {
	h, err := ParseHash(s)
	if err != nil {
		panic(err)
	}
	return h
}

// NewHash returns the hash of the given scheme over a raw SHA-256 digest: base64
// for [SchemeH1] and lower-case hex for [SchemeZH]. Other schemes return "".
func NewHash(scheme Scheme, sum [32]byte) Hash {
	switch scheme {
	case SchemeH1:
		return Hash(string(SchemeH1) + base64.StdEncoding.EncodeToString(sum[:]))
	case SchemeZH:
		return Hash(string(SchemeZH) + hex.EncodeToString(sum[:]))
	}
	return ""
}

// Scheme returns the hash's scheme with its colon, such as "h1:", or "" if
// the hash has no colon.
func (h Hash) Scheme() Scheme {
	i := strings.IndexByte(string(h), ':')
	if i < 0 {
		return ""
	}
	return Scheme(h[:i+1])
}

// Value returns the part after the scheme's colon, or "" if there is none.
func (h Hash) Value() string {
	i := strings.IndexByte(string(h), ':')
	if i < 0 {
		return ""
	}
	return string(h[i+1:])
}

// String returns the hash as the lock file spells it.
func (h Hash) String() string { return string(h) }

// GoString returns a Go expression for the hash, for test diffs.
func (h Hash) GoString() string { return fmt.Sprintf("hash.MustParseHash(%q)", string(h)) }

// MarshalText implements [encoding.TextMarshaler].
func (h Hash) MarshalText() ([]byte, error) { return []byte(h), nil }

// UnmarshalText implements [encoding.TextUnmarshaler], validating as [ParseHash] does.
func (h *Hash) UnmarshalText(text []byte) error {
	v, err := ParseHash(string(text))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseError reports a malformed hash string.
type ParseError struct {
	Input  string // the string that was parsed
	Reason string // why it was rejected, as a sentence
}

// Error quotes the malformed input and says why it was rejected.
func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid hash %q: %s", e.Input, e.Reason)
}
