package mirror

import (
	"fmt"
	"sort"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
)

// DevOverrides maps providers to local directories holding a development
// build, as the dev_overrides block of OpenTofu's CLI configuration does.
// An overridden provider is used from its directory as it is: it is not
// installed, not verified, and never recorded in or removed from the lock
// file. Installers check [DevOverrides.Dir] before resolving a provider and
// show [DevOverrides.Warning] to the user, as tofu does.
type DevOverrides map[tfaddr.Provider]string

// Dir returns the directory overriding addr, if any.
func (d DevOverrides) Dir(addr tfaddr.Provider) (string, bool) {
	dir, ok := d[addr]
	return dir, ok
}

// Overrides reports whether addr is overridden and so must be left out of
// installation and of the lock file.
func (d DevOverrides) Overrides(addr tfaddr.Provider) bool {
	_, ok := d[addr]
	return ok
}

// Warning returns the warning to show while overrides are in effect, or ""
// when there are none. It lists every override, sorted by provider.
func (d DevOverrides) Warning() string {
	if len(d) == 0 {
		return ""
	}
	addrs := make([]tfaddr.Provider, 0, len(d))
	for a := range d {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].String() < addrs[j].String() })
	var b strings.Builder
	b.WriteString("Provider development overrides are in effect.\n\nThe following provider development overrides are set in the CLI configuration:\n")
	for _, a := range addrs {
		fmt.Fprintf(&b, " - %s in %s\n", a.ForDisplay(), d[a])
	}
	b.WriteString("\nThese providers are used from those directories as they are: they are not installed, not verified against the dependency lock file, and not recorded in it. Their behavior may not match any published release.")
	return b.String()
}
