package install

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
	"github.com/tflock/tflock/source/providercache"
)

// fromInstalled brings a locked provider package into the cache from the
// install directory, where tofu, terraform or an earlier run installed it,
// instead of downloading it again (issue 13 item 1). It applies only when
// the lock file records hashes for the package (want) and the cache lacks
// it; the cache verifies the copy against want as it does a download, so a
// package that does not match is not used (ok is false and the caller
// fetches it from its origin).
func (r *run) fromInstalled(ctx context.Context, pkg source.ProviderPackage, want []hash.Hash) (e cache.Entry, ok bool, err error) {
	if len(want) == 0 {
		return cache.Entry{}, false, nil
	}
	if _, hit, err := r.s.Cache.Lookup(ctx, pkg, want); err != nil || hit {
		return cache.Entry{}, false, err
	}
	inst, err := providercache.NewDir(filepath.Join(r.s.InstallDir, "providers")).Get(pkg)
	if err != nil {
		return cache.Entry{}, false, nil
	}
	dir, err := filepath.EvalSymlinks(inst.Dir)
	if err != nil {
		return cache.Entry{}, false, nil
	}
	e, _, err = r.s.Cache.Fill(ctx, pkg, want, func(ctx context.Context, into string) (*source.Fetched, error) {
		if err := cache.CopyDir(into, dir); err != nil {
			return nil, err
		}
		return &source.Fetched{Package: pkg, Dir: into, Location: inst.Dir}, nil
	})
	switch {
	case err == nil:
		source.Emit(r.s.Events, source.Event{Kind: source.EventVerified, Package: pkg, Detail: "installed package matches the lock file"})
		return e, true, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return cache.Entry{}, false, err
	}
	return cache.Entry{}, false, nil // not usable: fetched from the origin instead
}
