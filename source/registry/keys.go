package registry

import _ "embed"

// HashiCorpKey is HashiCorp's public release-signing key, ASCII-armored
// (primary key fingerprint C874 011F 0AB4 0511 0D02 1055 3436 5D94 72D7
// 468F, key ID 34365D9472D7468F), the key Terraform treats as "official".
// It is the default of [Options.OfficialKeys] under [PolicyTerraform].
//
//go:embed keys/hashicorp.asc
var HashiCorpKey string

// HashiCorpKeyFingerprint is the fingerprint of [HashiCorpKey]'s primary
// key, upper-case hex, as HashiCorp publishes it.
const HashiCorpKeyFingerprint = "C874011F0AB405110D02105534365D9472D7468F"
