package registrytest

import (
	"bytes"
	"sync"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// signer is an OpenPGP key pair.
type signer struct {
	entity  *openpgp.Entity
	armored string
	keyID   string
}

var keyConfig = &packet.Config{
	Algorithm: packet.PubKeyAlgoEdDSA,
	Time:      func() time.Time { return time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC) },
}

var (
	keysOnce sync.Once
	keys     [3]*signer
	keysErr  error
)

// testKeys returns three key pairs, generated once per process: the
// registry's, an impostor's used by [BadSignature], and a partner key that
// vouches for the registry's with a trust signature.
func testKeys() ([3]*signer, error) {
	keysOnce.Do(func() {
		for i, name := range []string{"tflock test registry", "impostor", "partner"} {
			e, err := openpgp.NewEntity(name, "", "", keyConfig)
			if err != nil {
				keysErr = err
				return
			}
			var buf bytes.Buffer
			w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
			if err != nil {
				keysErr = err
				return
			}
			if err := e.Serialize(w); err != nil {
				keysErr = err
				return
			}
			if err := w.Close(); err != nil {
				keysErr = err
				return
			}
			keys[i] = &signer{entity: e, armored: buf.String(), keyID: e.PrimaryKey.KeyIdString()}
		}
	})
	return keys, keysErr
}

// armoredSign makes an ASCII-armored detached signature.
func (s *signer) armoredSign(doc []byte) (string, error) {
	var buf bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&buf, s.entity, bytes.NewReader(doc), keyConfig); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func (s *signer) sign(doc []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := openpgp.DetachSign(&buf, s.entity, bytes.NewReader(doc), keyConfig); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
