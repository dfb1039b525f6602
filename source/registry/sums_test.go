package registry_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry"
)

func newKey(t testing.TB, cfg *packet.Config) (*openpgp.Entity, string) {
	t.Helper()
	e, err := openpgp.NewEntity("test", "", "", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return e, buf.String()
}

func TestVerifySignature(t *testing.T) {
	doc := []byte("7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  a.zip\n")
	past := func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}
	good, goodPub := newKey(t, cfg)
	_, otherPub := newKey(t, cfg)
	expiring := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: past, KeyLifetimeSecs: 3600}
	old, oldPub := newKey(t, expiring)

	sign := func(e *openpgp.Entity, c *packet.Config, armored bool) []byte {
		var buf bytes.Buffer
		var err error
		if armored {
			err = openpgp.ArmoredDetachSign(&buf, e, bytes.NewReader(doc), c)
		} else {
			err = openpgp.DetachSign(&buf, e, bytes.NewReader(doc), c)
		}
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	sig := sign(good, cfg, false)

	for name, tc := range map[string]struct {
		doc, sig    []byte
		keys        []string
		wantID      string
		wantExpired bool
		wantErr     bool
	}{
		"Binary":      {doc: doc, sig: sig, keys: []string{otherPub, goodPub}, wantID: good.PrimaryKey.KeyIdString()},
		"Armored":     {doc: doc, sig: sign(good, cfg, true), keys: []string{goodPub}, wantID: good.PrimaryKey.KeyIdString()},
		"ExpiredKey":  {doc: doc, sig: sign(old, expiring, false), keys: []string{oldPub}, wantID: old.PrimaryKey.KeyIdString(), wantExpired: true},
		"WrongKey":    {doc: doc, sig: sig, keys: []string{otherPub}, wantErr: true},
		"NoKey":       {doc: doc, sig: sig, wantErr: true},
		"BadKey":      {doc: doc, sig: sig, keys: []string{"not a key"}, wantErr: true},
		"TamperedDoc": {doc: append([]byte("x"), doc...), sig: sig, keys: []string{goodPub}, wantErr: true},
		"GarbageSig":  {doc: doc, sig: []byte("garbage"), keys: []string{goodPub}, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			id, expired, err := registry.VerifySignature(tc.doc, tc.sig, tc.keys)
			if tc.wantErr {
				if !errors.Is(err, registry.ErrSignature) || !errors.Is(err, source.ErrChecksumMismatch) {
					t.Errorf("got %q, %v; want ErrSignature", id, err)
				}
				return
			}
			if err != nil || id != tc.wantID || expired != tc.wantExpired {
				t.Errorf("got %q, expired %v, %v; want %q, expired %v", id, expired, err, tc.wantID, tc.wantExpired)
			}
		})
	}
}

func TestParseSumsErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"ThreeFields": "7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  a b\n",
		"ShortDigest": "7d7e  a.zip\n",
		"StarNoName":  "7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee *\n",
		"NotHex":      "zz7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  a.zip\n",
		"Conflict":    "7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  a.zip\nf8b6cf9ade087c17826d49d89cef21261cdc22bd27065bbc5b27d7dbf7fbbf6c  a.zip\n",
	} {
		if _, err := registry.ParseSums([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestParseSumsEmptyName is the regression test for a line whose file name
// is only sha256sum's binary-mode "*": it was accepted with an empty file
// name (found by FuzzParseSums); the error names the line.
func TestParseSumsEmptyName(t *testing.T) {
	doc := "7d7e888fdd28abfe00894f9055209b9eec785153641de98e6852aa071008d4ee  a.zip\n" +
		"f8b6cf9ade087c17826d49d89cef21261cdc22bd27065bbc5b27d7dbf7fbbf6c *\n"
	sums, err := registry.ParseSums([]byte(doc))
	if err == nil {
		t.Fatalf("accepted, giving %v", sums)
	}
	if want := "SHA256SUMS line 2: no file name"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}
