package install

import (
	"context"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/cache"
)

// SetReplaceFile replaces the rename that puts a staged configuration
// file in place, for a test that makes it fail; the returned function
// restores it.
func SetReplaceFile(f func(oldpath, newpath string) error) (restore func()) {
	prev := replaceFile
	replaceFile = f
	return func() { replaceFile = prev }
}

// Trusted is what the run's trust seam (voucher.vouch) answered for one
// package, for tests of its result.
type Trusted struct {
	Entry    cache.Entry
	Hit      bool
	Reused   bool
	Record   []hash.Hash
	Origin   []hash.Record
	Verified string
	Signed   bool
}

// Vouch asks the trust seam of a run with opts (a lock file in
// opts.Resolve.Lock, so that none is read) for pkg, whose version the lock
// file holds the hashes lock of.
func Vouch(ctx context.Context, opts Options, pkg source.Package, lock []hash.Hash) (Trusted, error) {
	s, err := opts.normalize()
	if err != nil {
		return Trusted{}, err
	}
	defer s.cleanup()
	t, err := voucher{newRun(s)}.vouch(ctx, wanted{pkg: pkg, lock: lock})
	return Trusted{Entry: t.entry, Hit: t.hit, Reused: t.reused, Record: t.record, Origin: t.origin, Verified: t.verified, Signed: t.signed}, err
}
