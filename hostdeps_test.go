package tflock_test

import (
	"os"
	"testing"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// openTofuRequires is what OpenTofu v1.12.6's go.mod requires of the
// modules tflock requires too (read from its go.mod at the tag v1.12.6).
// OpenTofu pins a fork of hcl with a replace directive for
// github.com/hashicorp/hcl/v2 v2.20.1, which stops applying as soon as a
// dependency requires a later hcl; a requirement above OpenTofu's raises
// the host's build. The README ("Embedding: the versions a host needs")
// lists the same figures.
var openTofuRequires = map[string]string{
	"github.com/hashicorp/hcl/v2":          "v2.20.1",
	"github.com/zclconf/go-cty":            "v1.18.0",
	"github.com/ProtonMail/go-crypto":      "v1.4.1",
	"github.com/Masterminds/semver/v3":     "v3.4.0",
	"github.com/klauspost/compress":        "v1.18.5",
	"github.com/google/go-cmp":             "v0.7.0",
	"github.com/opencontainers/go-digest":  "v1.0.0",
	"github.com/opencontainers/image-spec": "v1.1.1",
	"github.com/cloudflare/circl":          "v1.6.3",
	"github.com/mitchellh/go-wordwrap":     "v1.0.1",
	"github.com/agext/levenshtein":         "v1.2.3",
	"golang.org/x/crypto":                  "v0.52.0",
	"golang.org/x/mod":                     "v0.35.0",
	"golang.org/x/net":                     "v0.54.0",
	"golang.org/x/sync":                    "v0.20.0",
	"golang.org/x/sys":                     "v0.45.0",
	"golang.org/x/text":                    "v0.37.0",
	"golang.org/x/tools":                   "v0.44.0",
	"oras.land/oras-go/v2":                 "v2.6.1",
}

// TestRequirementsAHostCanLiveWith checks that go.mod requires no module
// at a version above the one OpenTofu v1.12.6 requires, so that a program
// built with OpenTofu's module graph (its replace of hcl included) can
// import tflock without a version of its own being raised.
func TestRequirementsAHostCanLiveWith(t *testing.T) {
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range mf.Require {
		limit, ok := openTofuRequires[r.Mod.Path]
		if !ok {
			continue
		}
		checked++
		if semver.Compare(r.Mod.Version, limit) > 0 {
			t.Errorf("go.mod requires %s %s, above OpenTofu v1.12.6's %s: a host that builds with OpenTofu's module graph would be raised (keep the lowest version that works)", r.Mod.Path, r.Mod.Version, limit)
		}
	}
	if checked < 10 {
		t.Errorf("only %d of go.mod's requirements are compared with OpenTofu's; the table or go.mod has moved", checked)
	}
}
