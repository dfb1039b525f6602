package source

import "context"

// ListerFunc adapts a function to the [Lister] interface.
type ListerFunc func(ctx context.Context, pkg Package) ([]Available, error)

// Versions calls f.
func (f ListerFunc) Versions(ctx context.Context, pkg Package) ([]Available, error) {
	return f(ctx, pkg)
}

// FetcherFunc adapts a function to the [Fetcher] interface.
type FetcherFunc func(ctx context.Context, pkg Package, dir string) (*Fetched, error)

// Fetch calls f.
func (f FetcherFunc) Fetch(ctx context.Context, pkg Package, dir string) (*Fetched, error) {
	return f(ctx, pkg, dir)
}

// Join returns a [Source] that lists versions with l and fetches with f.
func Join(l Lister, f Fetcher) Source {
	return joined{l, f}
}

type joined struct {
	Lister
	Fetcher
}
