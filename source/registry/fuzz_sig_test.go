package registry_test

import (
	"bytes"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
)

// FuzzVerifySignature checks signature verification on any document,
// signature and key: it never panics; a failure wraps ErrSignature and
// source.ErrChecksumMismatch; a success names a key ID of 16 upper-case hex
// digits and is repeated on a second call (the key-ring cache does not
// change the answer); and a signature that verifies over doc never
// verifies, not even as "expired", over doc with one more byte.
func FuzzVerifySignature(f *testing.F) {
	doc := []byte("7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  terraform-provider-null_3.2.0_linux_amd64.zip\n")
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}
	past := func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
	expiring := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: past, KeyLifetimeSecs: 3600}
	good, goodPub := newKey(f, cfg)
	old, oldPub := newKey(f, expiring)
	sign := func(e *openpgp.Entity, c *packet.Config, armored bool) []byte {
		var buf bytes.Buffer
		var err error
		if armored {
			err = openpgp.ArmoredDetachSign(&buf, e, bytes.NewReader(doc), c)
		} else {
			err = openpgp.DetachSign(&buf, e, bytes.NewReader(doc), c)
		}
		if err != nil {
			f.Fatal(err)
		}
		return buf.Bytes()
	}
	f.Add(doc, sign(good, cfg, false), goodPub)
	f.Add(doc, sign(good, cfg, true), goodPub)
	f.Add(doc, sign(old, expiring, false), oldPub)
	f.Add(doc, sign(good, cfg, false), registry.HashiCorpKey)
	f.Add(doc, []byte("garbage"), "not a key")
	f.Add([]byte{}, []byte{}, "")

	keyID := regexp.MustCompile(`^[0-9A-F]{16}$`)
	f.Fuzz(func(t *testing.T, doc, sig []byte, key string) {
		keys := []string{key}
		id, expired, err := registry.VerifySignature(doc, sig, keys)
		if err != nil {
			if !errors.Is(err, registry.ErrSignature) || !errors.Is(err, source.ErrChecksumMismatch) {
				t.Fatalf("error %v wraps neither ErrSignature nor ErrChecksumMismatch", err)
			}
			return
		}
		if !keyID.MatchString(id) {
			t.Errorf("key ID %q is not 16 upper-case hex digits", id)
		}
		id2, expired2, err2 := registry.VerifySignature(doc, sig, keys)
		if id2 != id || expired2 != expired || err2 != nil {
			t.Errorf("second call: %q, %v, %v; first: %q, %v", id2, expired2, err2, id, expired)
		}
		tampered := append(bytes.Clone(doc), 'x')
		if id, expired, err := registry.VerifySignature(tampered, sig, keys); err == nil {
			t.Errorf("a signature over the document also verifies over the document plus a byte (key %s, expired %v)", id, expired)
		}
	})
}
