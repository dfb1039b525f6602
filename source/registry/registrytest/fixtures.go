package registrytest

// Fixtures declares what a [Server] serves.
type Fixtures struct {
	// Providers are the providers served.
	Providers []Provider
	// Modules are the modules served.
	Modules []Module
}

// Provider is one provider and its releases.
type Provider struct {
	// Addr is "HOST/NAMESPACE/TYPE", or "NAMESPACE/TYPE" for the server's
	// first host.
	Addr string
	// Versions are the releases, in any order.
	Versions []ProviderVersion
	// MovedTo, when set ("NAMESPACE/TYPE"), is sent as moved_to by the
	// legacy "-" namespace lookup for this provider's type.
	MovedTo string
	// Unsigned makes download responses list no signing key and serve no
	// signature, as the OpenTofu registry does for providers whose
	// authors gave it no key.
	Unsigned bool
	// Partner adds to the signing key a trust_signature by the server's
	// partner key ([Server.PartnerKey]), as Terraform's registry does for
	// partner providers.
	Partner bool
}

// ProviderVersion is one release of a provider.
type ProviderVersion struct {
	// Version is the version string as the registry lists it ("1.2.0").
	Version string
	// Platforms are "os_arch" strings. Default: linux_amd64, darwin_arm64.
	Platforms []string
	// Protocols are the plugin protocol versions. Default: "6.0".
	Protocols []string
	// Size is the size in bytes of the generated executable. Default 1024.
	Size int
	// Binary makes the generated executable's contents look like a real
	// program's to a compressor (about 2.4:1 with DEFLATE; see
	// internal/benchdata) instead of a run of letters that compresses
	// a thousandfold: for benchmarks, where inflating the package should
	// cost what a real provider's costs. Default false.
	Binary bool
}

// Module is one registry module and its versions.
type Module struct {
	// Addr is "HOST/NAMESPACE/NAME/SYSTEM", or "NAMESPACE/NAME/SYSTEM" for
	// the server's first host.
	Addr string
	// Versions are the module's versions served.
	Versions []ModuleVersion
}

// Delivery is how the module download endpoint hands out the package.
type Delivery int

// The module download styles of the module registry protocol.
const (
	// DeliverJSON answers 200 with {"location": URL of a .tar.gz}.
	DeliverJSON Delivery = iota
	// DeliverHeader answers 204 with an X-Terraform-Get header holding a
	// relative path to a .zip ending in "//SUBDIR" when Subdir is set.
	DeliverHeader
	// DeliverDirect answers 200 with {"location": ...,
	// "use_registry_credentials": true}; the archive then requires the
	// registry's token when [Options.Token] is set.
	DeliverDirect
)

// ModuleVersion is one version of a module.
type ModuleVersion struct {
	// Version is the version string as the registry lists it.
	Version string
	// Files are the package's files by slash-separated path. Default: a
	// main.tf naming the module and version.
	Files map[string]string
	// Delivery selects the download style.
	Delivery Delivery
	// Location, when set, is returned verbatim as the download location
	// (for example a "git::https://..." address), and no archive is served.
	Location string
	// Subdir, with DeliverHeader, is appended to the location as
	// "//SUBDIR".
	Subdir string
}
