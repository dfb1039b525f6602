package registry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// TestHashiCorpKey checks the embedded key against the fingerprint
// HashiCorp publishes: a damaged or substituted key fails here (the armor
// checksum catches a transcription error, the fingerprint a wrong key).
func TestHashiCorpKey(t *testing.T) {
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(HashiCorpKey))
	if err != nil {
		t.Fatal(err)
	}
	if len(ring) != 1 {
		t.Fatalf("%d keys in the armor, want 1", len(ring))
	}
	if got := strings.ToUpper(fmt.Sprintf("%x", ring[0].PrimaryKey.Fingerprint)); got != HashiCorpKeyFingerprint {
		t.Fatalf("fingerprint %s, want %s", got, HashiCorpKeyFingerprint)
	}
}

func TestOfficialKeysDefault(t *testing.T) {
	if got := (Options{SignaturePolicy: PolicyTerraform}).withDefaults().OfficialKeys; len(got) != 1 || got[0] != HashiCorpKey {
		t.Errorf("PolicyTerraform default OfficialKeys = %d keys, want HashiCorp's", len(got))
	}
	if got := (Options{}).withDefaults().OfficialKeys; got != nil {
		t.Errorf("PolicyOpenTofu default OfficialKeys = %d keys, want none", len(got))
	}
	own := []string{"x"}
	if got := (Options{SignaturePolicy: PolicyTerraform, OfficialKeys: own}).withDefaults().OfficialKeys; len(got) != 1 || got[0] != "x" {
		t.Errorf("caller's OfficialKeys replaced: %v", got)
	}
}
