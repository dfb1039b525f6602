package install

import (
	"context"

	"github.com/tflock/tflock/resolve"
)

// readCalledTree reads the module tree of a fetched remote module called
// by mc: its input variables, which its own module calls' sources and
// versions may use, take the arguments of mc.
func (r *run) readCalledTree(ctx context.Context, dir string, mc *resolve.ModuleCall, pkgRoot, manifestRoot string) ([]*resolve.ModuleCall, error) {
	opts := r.readOptions()
	opts.Caller = mc
	cfg, diags := resolve.ReadTree(dir, mc.Path, opts)
	return r.useTree(ctx, dir, cfg, diags, pkgRoot, manifestRoot)
}
