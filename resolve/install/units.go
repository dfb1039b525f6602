package install

import (
	"context"

	"github.com/hashicorp/hcl/v2"
	"github.com/tflock/tflock/resolve/config"
)

// readRoot reads the root module tree: the caller's [Options.Config], or
// from [Options.FS], or from the directory.
func (r *run) readRoot(ctx context.Context) ([]*config.ModuleCall, error) {
	switch {
	case r.s.Config != nil:
		if len(r.s.Config.Modules) == 0 {
			return nil, &ConfigError{Dir: r.s.dir, Diagnostics: emptyConfig}
		}
		return r.useTree(ctx, r.s.dir, r.s.Config, nil, r.s.Config.Modules[0].Dir, ".")
	case r.s.FS != nil:
		cfg, diags := config.ReadTreeFS(r.s.FS, ".", "", r.readOptions())
		return r.useTree(ctx, ".", cfg, diags, ".", ".")
	}
	return r.readTree(ctx, r.s.dir, "", r.s.dir, ".")
}

// emptyConfig is the error of an [Options.Config] or [CheckOptions.Config]
// without modules.
var emptyConfig = hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Empty configuration", Detail: "The configuration given holds no module: read it with config.ReadTree or config.ReadTreeFS."}}

// checkRoot is the root module tree Check reads from [CheckOptions.Config]
// or [CheckOptions.FS]; nil when Check reads Dir.
func checkRoot(opts Options, ropts config.ReadOptions) (*config.Config, error) {
	switch {
	case opts.Config != nil:
		if len(opts.Config.Modules) == 0 {
			return nil, &ConfigError{Dir: opts.Dir, Diagnostics: emptyConfig}
		}
		return opts.Config, nil
	case opts.FS != nil:
		cfg, diags := config.ReadTreeFS(opts.FS, ".", "", ropts)
		if diags.HasErrors() {
			return nil, &ConfigError{Dir: ".", Diagnostics: diags}
		}
		return cfg, nil
	}
	return nil, nil
}
