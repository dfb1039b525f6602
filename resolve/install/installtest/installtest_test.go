package installtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// TestStartSetUpError checks that a set-up error comes back as an error
// naming its cause, not as a panic of the clean-up.
func TestStartSetUpError(t *testing.T) {
	bad := registrytest.Fixtures{Providers: []registrytest.Provider{{Addr: "not-an-address"}}}
	w, err := installtest.Start(context.Background(), installtest.Options{Fixtures: &bad, NoGit: true})
	if err == nil || w != nil {
		t.Fatalf("Start = %v, %v; want no world and an error", w, err)
	}
	if !strings.Contains(err.Error(), "not-an-address") {
		t.Fatalf("error %q does not name the bad address", err)
	}

	// A failure after the registry started (a canceled context stops the
	// OCI push) closes what was started and returns the error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if w, err := installtest.Start(ctx, installtest.Options{NoGit: true}); err == nil {
		w.Close()
		t.Skip("a canceled context does not stop the set-up")
	}
}
