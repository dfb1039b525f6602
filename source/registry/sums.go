package registry

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ProtonMail/go-crypto/openpgp"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// Sums is a parsed SHA256SUMS document: the zh: hash of each file it lists,
// by file name.
type Sums map[string]hash.Hash

// ParseSums parses a SHA256SUMS document as published with provider
// releases: one "HEX  FILENAME" line per file (the separator may be any run
// of blanks; "*" before the name, as sha256sum writes for binary mode, is
// dropped). Blank lines are ignored. A line that is not of that form (a
// lone "*" is no file name), a digest that is not 64 hex digits, or a file
// listed twice with different digests is an error naming the line.
func ParseSums(doc []byte) (Sums, error) {
	out := make(Sums, bytes.Count(doc, []byte{'\n'})+1)
	line := 0
	for len(doc) > 0 {
		line++
		var text []byte
		text, doc, _ = bytes.Cut(doc, []byte{'\n'})
		if len(text) > maxSumsLine {
			return nil, fmt.Errorf("SHA256SUMS line %d: %v", line, bufio.ErrTooLong)
		}
		fields := bytes.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("SHA256SUMS line %d: want a digest and a file name", line)
		}
		digest, name := strings.ToLower(string(fields[0])), string(bytes.TrimPrefix(fields[1], []byte("*")))
		if name == "" {
			return nil, fmt.Errorf("SHA256SUMS line %d: no file name after the digest", line)
		}
		var b [32]byte
		if len(digest) != 2*len(b) {
			return nil, fmt.Errorf("SHA256SUMS line %d: %q is not a SHA-256 digest in hex", line, fields[0])
		}
		if _, err := hex.Decode(b[:], []byte(digest)); err != nil {
			return nil, fmt.Errorf("SHA256SUMS line %d: %q is not a SHA-256 digest in hex", line, fields[0])
		}
		h := hash.Hash(string(hash.SchemeZH) + digest)
		if prev, ok := out[name]; ok && prev != h {
			return nil, fmt.Errorf("SHA256SUMS line %d: %s is listed twice with different digests", line, name)
		}
		out[name] = h
	}
	return out, nil
}

// maxSumsLine bounds the length of one SHA256SUMS line.
const maxSumsLine = 1 << 20

// Hashes returns the distinct zh: hashes in the document, sorted.
func (s Sums) Hashes() []hash.Hash {
	seen := make(map[hash.Hash]bool, len(s))
	var out []hash.Hash
	for _, h := range s {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	sortHashes(out)
	return out
}

// Contains reports whether h is listed for any file.
func (s Sums) Contains(h hash.Hash) bool {
	for _, v := range s {
		if v == h {
			return true
		}
	}
	return false
}

// ErrSignature is wrapped by the error for a SHA256SUMS signature that does
// not verify against any of the registry's keys, or that is required and
// missing. It also matches [source.ErrChecksumMismatch].
var ErrSignature = fmt.Errorf("%w: SHA256SUMS signature not valid", source.ErrChecksumMismatch)

// VerifySignature checks a detached OpenPGP signature (binary or ASCII
// armored) over doc against each ASCII-armored public key in turn and
// returns the upper-case hex ID of the primary key that made it. A
// signature by an expired key is accepted, as OpenTofu does by default, and
// expired reports it. No key, a malformed key, or no key that verifies
// gives an error wrapping [ErrSignature].
func VerifySignature(doc, sig []byte, armoredKeys []string) (keyID string, expired bool, err error) {
	keyID, _, expired, err = verifySignature(doc, sig, armoredKeys)
	return keyID, expired, err
}

// verifySignature is VerifySignature, also returning the index of the key
// that verified.
func verifySignature(doc, sig []byte, armoredKeys []string) (keyID string, index int, expired bool, err error) {
	if len(armoredKeys) == 0 {
		return "", -1, false, fmt.Errorf("%w: the registry lists no signing key", ErrSignature)
	}
	expiredIndex := -1
	var expiredID string
	var lastErr error
	for i, k := range armoredKeys {
		ring, err := readKeyRing(k)
		if err != nil {
			return "", -1, false, fmt.Errorf("%w: signing key %d cannot be read: %v", ErrSignature, i+1, err)
		}
		ent, err := checkDetached(ring, doc, sig)
		switch {
		case err == nil:
			return keyIDOf(ent), i, false, nil
		case errors.Is(err, pgperrors.ErrKeyExpired), errors.Is(err, pgperrors.ErrSignatureExpired):
			if expiredID == "" {
				expiredID, expiredIndex = keyIDOf(ent), i
			}
		case errors.Is(err, pgperrors.ErrUnknownIssuer):
			lastErr = errors.New("not signed by this key")
		default:
			lastErr = err
		}
	}
	if expiredID != "" {
		return expiredID, expiredIndex, true, nil
	}
	return "", -1, false, fmt.Errorf("%w: no signing key the registry lists verifies it (%v)", ErrSignature, lastErr)
}

func keyIDOf(e *openpgp.Entity) string {
	if e == nil || e.PrimaryKey == nil {
		return "n/a"
	}
	return e.PrimaryKey.KeyIdString()
}

// keyRings caches parsed armored keys: every release of a registry lists
// the same few keys, and parsing one costs more than checking a signature.
var keyRings struct {
	sync.Mutex
	m map[string]openpgp.EntityList
}

// maxKeyRings bounds keyRings; when full it is emptied.
const maxKeyRings = 64

// readKeyRing parses an armored key ring, or returns the one parsed before.
// Failures are not cached.
func readKeyRing(armored string) (openpgp.EntityList, error) {
	keyRings.Lock()
	ring, ok := keyRings.m[armored]
	keyRings.Unlock()
	if ok {
		return ring, nil
	}
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armored))
	if err != nil {
		return nil, err
	}
	keyRings.Lock()
	if keyRings.m == nil || len(keyRings.m) >= maxKeyRings {
		keyRings.m = make(map[string]openpgp.EntityList)
	}
	keyRings.m[armored] = ring
	keyRings.Unlock()
	return ring, nil
}
