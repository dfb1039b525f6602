package install_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestAttackS3LocationCredentialsStayOut is the regression test for a
// registry that answers a module's download with an "s3::" location
// carrying the S3 getter's credentials in its query
// ("aws_access_key_secret=..."): tflock does not fetch S3 and says so,
// and that error, and every event, named the location with them.
func TestAttackS3LocationCredentialsStayOut(t *testing.T) {
	const secret = "wJalrXUtnFEMIK7MDENG"
	fx := registrytest.Fixtures{Modules: []registrytest.Module{{Addr: installtest.RegistryHost + "/acme/net/cloud", Versions: []registrytest.ModuleVersion{
		{Version: "1.0.0", Location: "s3::https://s3.amazonaws.com/bucket/net.zip?aws_access_key_id=AKIA" + secret + "&aws_access_key_secret=" + secret + "&aws_access_token=" + secret},
	}}}}
	w := startWorldWith(t, installtest.Options{NoGit: true, Fixtures: &fx})
	var mu sync.Mutex
	var seen []string
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "module \"net\" {\n  source  = \"" + installtest.RegistryHost + "/acme/net/cloud\"\n  version = \"1.0.0\"\n}\n"})
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: w.Source, Cache: openCache(t), Events: source.EventsFunc(func(e source.Event) {
		mu.Lock()
		seen = append(seen, e.Detail)
		mu.Unlock()
	})})
	if err == nil || !strings.Contains(err.Error(), "s3") {
		t.Fatalf("Init: %v, want the s3 location refused", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error holds the credentials: %v", err)
	}
	for _, s := range seen {
		if strings.Contains(s, secret) {
			t.Errorf("an event holds the credentials: %s", s)
		}
	}
}
