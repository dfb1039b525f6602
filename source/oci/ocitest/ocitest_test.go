package ocitest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"oras.land/oras-go/v2"

	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/oci/ocitest"
)

// TestPushProviderShape checks the pushed index against the structure
// OpenTofu's documentation gives for a provider version in an OCI mirror.
func TestPushProviderShape(t *testing.T) {
	srv := ocitest.NewServer(ocitest.ServerOptions{})
	defer srv.Close()
	ctx := context.Background()
	repo, err := srv.Repository("mirror/ns-type")
	if err != nil {
		t.Fatal(err)
	}
	z, err := ocitest.Zip(map[string]string{"terraform-provider-type": "x"})
	if err != nil {
		t.Fatal(err)
	}
	plats := map[source.Platform][]byte{{OS: "linux", Arch: "amd64"}: z, {OS: "darwin", Arch: "arm64"}: z}
	if _, err := ocitest.PushProvider(ctx, repo, "1.0.0+x", plats); err != nil {
		t.Fatal(err)
	}
	_, data, err := oras.FetchBytes(ctx, repo, "1.0.0_x", oras.DefaultFetchBytesOptions)
	if err != nil {
		t.Fatal(err)
	}
	type platform struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
	}
	var got struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
		ArtifactType  string `json:"artifactType"`
		Manifests     []struct {
			MediaType    string   `json:"mediaType"`
			ArtifactType string   `json:"artifactType"`
			Platform     platform `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","artifactType":"application/vnd.opentofu.provider","manifests":[` +
		`{"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.opentofu.provider-target","platform":{"architecture":"arm64","os":"darwin"}},` +
		`{"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.opentofu.provider-target","platform":{"architecture":"amd64","os":"linux"}}]}`
	gotJSON, _ := json.Marshal(got)
	if diff := cmp.Diff(want, string(gotJSON)); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}
}
