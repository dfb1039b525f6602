module github.com/tflock/tflock

go 1.26.0

require (
	github.com/Masterminds/semver/v3 v3.4.0
	github.com/ProtonMail/go-crypto v1.4.1
	github.com/google/go-cmp v0.7.0
	github.com/google/go-containerregistry v0.21.5
	github.com/hashicorp/hcl/v2 v2.20.1
	github.com/hashicorp/terraform-registry-address v0.4.0
	github.com/hashicorp/terraform-svchost v0.2.1
	github.com/klauspost/compress v1.18.5
	github.com/opencontainers/go-digest v1.0.0
	github.com/opencontainers/image-spec v1.1.1
	github.com/zclconf/go-cty v1.18.0
	golang.org/x/mod v0.35.0
	golang.org/x/net v0.54.0
	golang.org/x/sync v0.20.0
	golang.org/x/sys v0.45.0
	golang.org/x/tools v0.44.0
	oras.land/oras-go/v2 v2.6.1
)

require (
	github.com/agext/levenshtein v1.2.1 // indirect
	github.com/apparentlymart/go-textseg/v15 v15.0.0 // indirect
	github.com/cloudflare/circl v1.6.3 // indirect
	github.com/mitchellh/go-wordwrap v1.0.1 // indirect
	golang.org/x/crypto v0.52.0 // indirect
	golang.org/x/text v0.37.0 // indirect
)
