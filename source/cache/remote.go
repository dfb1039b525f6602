package cache

import (
	"context"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// Remote is a tier shared by many machines behind the local cache, such as
// an OCI registry (package ocitier). The cache never trusts it: what Get
// brings is verified exactly as a download from the package's origin.
type Remote interface {
	// Get writes the archive (a zip) the tier holds for pkg to the file
	// path, which does not exist yet, whole or not at all. want are the
	// hashes pkg must match (a lock file's, or the origin's signed
	// checksums on a first install); the tier may find the package by
	// them (a module by its h1:). A miss is an error wrapping
	// [source.ErrNotFound].
	Get(ctx context.Context, pkg source.Package, want []hash.Hash, path string) (RemoteArchive, error)
	// Put stores the archive at path for pkg. a.Hashes are the verified
	// hashes of the package: its h1: and, for a provider, the zh: of the
	// zip at path.
	Put(ctx context.Context, pkg source.Package, a RemoteArchive, path string) error
}

// RemoteArchive describes a package archive in a [Remote] tier.
type RemoteArchive struct {
	// Hashes: for Put, the package's verified h1: (and zh:); from Get,
	// what the tier checked while reading (the zh: of the bytes written),
	// which the cache still verifies against the package's hashes.
	Hashes []hash.Hash
	// Subdir is the subdirectory of a module package that its origin
	// designated as the module's root, as in [source.Fetched.Subdir].
	Subdir string
	// Location is where Get read the archive from, without credentials.
	Location string
}
