package cache

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tflock/tflock/source"
)

// lock takes the lock of one package, both within this process and across
// processes (a lock file under locks/, never removed), or, when local is
// set, within this process only (no file: [Cache.Hash]).
func (c *Cache) lock(ctx context.Context, pkg source.Package, key string, local bool) (func(), error) {
	path := c.lockPath(keyName(key))
	waiting := func() {
		source.EmitContext(ctx, c.opts.Events, source.Event{Kind: source.EventCacheWait, Package: pkg, Detail: "another fill of this package is in progress"})
	}
	var unlock func()
	var err error
	if local {
		unlock, err = c.locks.LockLocal(ctx, path, waiting)
	} else {
		if err := checkOwn(path, false); err != nil {
			return nil, err
		}
		unlock, err = c.locks.Lock(ctx, path, waiting)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cache: %w", err)
	}
	return unlock, nil
}

// lockPath is the lock file of the package whose key name is keyName.
func (c *Cache) lockPath(keyName string) string {
	return filepath.Join(c.dir, "locks", keyName+".lock")
}
