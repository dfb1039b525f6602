//go:build !unix

package interop

// syncFS does nothing here.
func syncFS() {}
