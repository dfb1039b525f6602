package install_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/mirror"
	"github.com/tflock/tflock/source/sourcetest"
)

// TestLegacyPluginsHint: a provider no source has, but which sits in the
// legacy .terraform/plugins directory, fails with an error that says where
// to move it, as OpenTofu's does.
func TestLegacyPluginsHint(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": `terraform {
  required_providers {
    gone = {
      source = "registry.example.test/acme/gone"
    }
  }
}
`,
		filepath.Join(".terraform", "plugins", "registry.example.test", "acme", "gone", "1.0.0", source.CurrentPlatform.String(), "terraform-provider-gone"): "#!/bin/sh\n",
	})
	_, err := install.Init(context.Background(), install.Options{Dir: dir, Source: &sourcetest.Static{}, Cache: openCache(t)})
	var legacy *mirror.LegacyPluginError
	if !errors.As(err, &legacy) {
		t.Fatalf("err = %v, want a *mirror.LegacyPluginError", err)
	}
	if !errors.Is(err, source.ErrNotFound) {
		t.Errorf("the hint must still wrap the installation error: %v", err)
	}
	if !strings.Contains(err.Error(), "legacy plugins directory") || !strings.Contains(err.Error(), "terraform.d") {
		t.Errorf("the error does not say where to move the provider: %v", err)
	}

	// Without the legacy copy, the same failure carries no hint.
	clean := t.TempDir()
	writeFiles(t, clean, map[string]string{"main.tf": `terraform {
  required_providers {
    gone = {
      source = "registry.example.test/acme/gone"
    }
  }
}
`})
	_, err = install.Init(context.Background(), install.Options{Dir: clean, Source: &sourcetest.Static{}, Cache: openCache(t)})
	if err == nil || errors.As(err, &legacy) {
		t.Fatalf("err = %v, want a plain installation error", err)
	}
}
