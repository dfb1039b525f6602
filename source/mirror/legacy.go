package mirror

import (
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source/providercache"
)

// LegacyPluginsDir is the directory, relative to a configuration's working
// directory, where Terraform 0.12 and earlier kept provider plugins
// (".terraform/plugins"). OpenTofu does not install from it, and neither
// does tflock: it is not a mirror.
//
// Deprecated: it is a copy of [providercache.LegacyPluginsDir], the one
// [CheckLegacyPlugins] reads (setting this copy changes nothing): use
// that.
var LegacyPluginsDir = providercache.LegacyPluginsDir

// LegacyPluginError reports that a provider that could not be installed
// exists in the legacy plugins directory, and says where to move it so that
// it can be used. It wraps the installation error.
type LegacyPluginError = providercache.LegacyPluginError

// CheckLegacyPlugins looks for addr in the legacy plugins directory of
// workDir (both Terraform 0.12's "OS_ARCH/terraform-provider-TYPE_vVERSION"
// files and Terraform 0.13's "HOST/NAMESPACE/TYPE/VERSION/OS_ARCH"
// directories). When it finds it, it returns a *LegacyPluginError wrapping
// installErr; otherwise it returns installErr unchanged. Call it after an
// installation of addr failed.
func CheckLegacyPlugins(workDir string, addr tfaddr.Provider, installErr error) error {
	return providercache.CheckLegacyPlugins(workDir, addr, installErr)
}
