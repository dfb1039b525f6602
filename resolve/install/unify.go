package install

import (
	"fmt"

	"github.com/tflock/tflock/resolve"
)

// checkFetched makes sure that the final selection picks, for every remote
// module call, the version fetched and read while walking the tree. They
// differ only when UnifyModules ([Options.Resolve]) joins a call to calls
// of the same source read later, deeper in the tree, whose constraints
// exclude the version fetched first: the tree read would not be the tree
// locked.
func (r *run) checkFetched(sel *resolve.Selection) error {
	for _, pick := range sel.Modules {
		mf := r.fetched[pick.Call]
		if mf == nil || mf.pick.Package.Version == pick.Package.Version {
			continue
		}
		return fmt.Errorf("module %q: %s was fetched at %s, but the calls of the same source found deeper in the tree need %s together (%s); make the constraints of these calls agree", pick.Call, pick.LockSource, mf.pick.Package.Version, pick.Package.Version, pick.Reason)
	}
	return nil
}
