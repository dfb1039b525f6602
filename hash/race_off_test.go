//go:build !race

package hash

// raceBuild reports a -race build, under which the slowest checks use a
// subset of their inputs.
const raceBuild = false
