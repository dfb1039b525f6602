package source_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/internal/leaktest"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// TestEmitRedacts: whatever an emitter puts in an event, the handler sees
// no credential: not in the package (String, ForDisplay, fields) nor in
// the detail.
func TestEmitRedacts(t *testing.T) {
	token := leaktest.Secret(t, "token")
	key := leaktest.Secret(t, "key")
	check := leaktest.New(t, token, key)
	pkg := source.ModulePackage{Source: "git::https://alice:" + token + "@example.com/net.git?sshkey=" + key, Version: versions.MustParse("1.0.0")}
	var got []source.Event
	h := source.EventsFunc(func(e source.Event) { got = append(got, e) })
	source.Emit(h, source.Event{Kind: source.EventFetchStarted, Package: pkg, Detail: "from https://alice:" + token + "@example.com/net.git?sshkey=" + key})
	prov := source.ProviderPackage{Addr: tfaddr.MustParseProviderSource("example.com/acme/cloud"), Version: versions.MustParse("1.0.0")}
	source.Emit(h, source.Event{Kind: source.EventCacheHit, Package: prov, Detail: "h1:abc"})
	source.Emit(h, source.Event{Kind: source.EventWarning, Detail: "no package"})
	source.Emit(nil, source.Event{Kind: source.EventWarning}) // a nil handler is allowed
	if len(got) != 3 {
		t.Fatalf("%d events, want 3", len(got))
	}
	for _, e := range got[:1] {
		check.Text("the event", fmt.Sprintf("%#v", e)+e.Package.String()+e.Package.ForDisplay())
	}
	m := got[0].Package.(source.ModulePackage)
	if want := "git::https://REDACTED@example.com/net.git?sshkey=REDACTED"; m.Source != want || m.Version != pkg.Version {
		t.Errorf("event package %+v, want source %q and the version kept", m, want)
	}
	if want := "from https://REDACTED@example.com/net.git?sshkey=REDACTED"; got[0].Detail != want {
		t.Errorf("detail %q, want %q", got[0].Detail, want)
	}
	// Events without credentials are passed as they are.
	if got[1].Package != prov || got[1].Detail != "h1:abc" || got[2].Package != nil {
		t.Errorf("events changed: %+v, %+v", got[1], got[2])
	}
	// The sender's package is not changed.
	if !strings.Contains(pkg.Source, token) {
		t.Error("Emit changed the caller's package")
	}
}

// TestErrorRedacts: the text of an *Error holds no credential, whether it
// comes from its package, its source or its cause; the cause is still
// found with errors.Is.
func TestErrorRedacts(t *testing.T) {
	token := leaktest.Secret(t, "token")
	check := leaktest.New(t, token)
	pkg := source.ModulePackage{Source: "git::https://" + token + "@example.com/net.git", Ref: "v1"}
	cause := fmt.Errorf("%w: git ls-remote https://%s@example.com/net.git: 401", source.ErrUnauthorized, token)
	for _, e := range []*source.Error{
		{Source: "git", Package: pkg, Err: cause},
		{Package: pkg, Err: cause},
		{Source: "https://u:" + token + "@example.com", Err: cause},
		{Err: cause},
	} {
		check.Text("the error", e.Error())
		if !strings.Contains(e.Error(), "REDACTED@example.com") {
			t.Errorf("%q does not show where the credentials were", e.Error())
		}
		if !errors.Is(e, source.ErrUnauthorized) {
			t.Errorf("%v does not wrap ErrUnauthorized", e)
		}
	}
	if got, want := pkg.ForDisplay(), "git::https://REDACTED@example.com/net.git?ref=v1"; got != want {
		t.Errorf("ForDisplay = %q, want %q", got, want)
	}
}
