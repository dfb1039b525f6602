package providercache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
)

// LegacyPluginsDir is the directory, relative to a configuration's working
// directory, where Terraform 0.12 and earlier kept provider plugins
// (".terraform/plugins"). OpenTofu does not install from it, and neither
// does tflock: it is not a mirror.
var LegacyPluginsDir = filepath.Join(".terraform", "plugins")

// LegacyPluginError reports that a provider that could not be installed
// exists in the legacy plugins directory, and says where to move it so that
// it can be used. It wraps the installation error.
type LegacyPluginError struct {
	// Provider is the provider that could not be installed.
	Provider tfaddr.Provider
	// Found is the file or directory in the legacy plugins directory.
	Found string
	// MoveTo is the directory to move it to: the package directory under
	// the "terraform.d/plugins" implied local mirror of the working
	// directory (HOST/NAMESPACE/TYPE/VERSION/OS_ARCH), with VERSION and
	// OS_ARCH filled in when they can be read from Found.
	MoveTo string
	// Err is the installation error.
	Err error
}

// Error describes the failure and where to move the provider.
func (e *LegacyPluginError) Error() string {
	return fmt.Sprintf("%v\n\nProvider %s was found in the legacy plugins directory, at %s. OpenTofu does not install providers from there. To use this copy, move it into a local filesystem mirror, for example to %s, or configure a filesystem_mirror in the CLI configuration.",
		e.Err, e.Provider.ForDisplay(), e.Found, e.MoveTo)
}

// Unwrap returns the installation error.
func (e *LegacyPluginError) Unwrap() error { return e.Err }

// CheckLegacyPlugins looks for addr in the legacy plugins directory of
// workDir (both Terraform 0.12's "OS_ARCH/terraform-provider-TYPE_vVERSION"
// files and Terraform 0.13's "HOST/NAMESPACE/TYPE/VERSION/OS_ARCH"
// directories). When it finds it, it returns a *LegacyPluginError wrapping
// installErr; otherwise it returns installErr unchanged. Call it after an
// installation of addr failed.
func CheckLegacyPlugins(workDir string, addr tfaddr.Provider, installErr error) error {
	root := filepath.Join(workDir, LegacyPluginsDir)
	mirrorBase := filepath.Join("terraform.d", "plugins", addr.Hostname.String(), addr.Namespace, addr.Type)

	// Terraform 0.13 layout.
	typeDir := filepath.Join(root, addr.Hostname.String(), addr.Namespace, addr.Type)
	if vers, err := os.ReadDir(typeDir); err == nil {
		for _, v := range vers {
			plats, err := os.ReadDir(filepath.Join(typeDir, v.Name()))
			if err != nil {
				continue
			}
			for _, p := range plats {
				return &LegacyPluginError{
					Provider: addr,
					Found:    filepath.Join(typeDir, v.Name(), p.Name()),
					MoveTo:   filepath.Join(mirrorBase, v.Name(), p.Name()),
					Err:      installErr,
				}
			}
		}
	}

	// Terraform 0.12 layout: OS_ARCH/terraform-provider-TYPE_vVERSION_xN.
	plats, err := os.ReadDir(root)
	if err != nil {
		return installErr
	}
	prefix := "terraform-provider-" + addr.Type + "_"
	for _, p := range plats {
		if !p.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, p.Name()))
		if errors.Is(err, fs.ErrNotExist) || err != nil {
			continue
		}
		for _, f := range files {
			if !strings.HasPrefix(f.Name(), prefix) {
				continue
			}
			version := "VERSION"
			rest := strings.TrimPrefix(f.Name(), prefix)
			if v, ok := strings.CutPrefix(rest, "v"); ok {
				version, _, _ = strings.Cut(v, "_")
				version = strings.TrimSuffix(version, ".exe")
			}
			return &LegacyPluginError{
				Provider: addr,
				Found:    filepath.Join(root, p.Name(), f.Name()),
				MoveTo:   filepath.Join(mirrorBase, version, p.Name()),
				Err:      installErr,
			}
		}
	}
	return installErr
}
