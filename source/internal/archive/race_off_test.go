//go:build !race

package archive

// raceBuild reports a -race build, under which the slowest checks use a
// smaller input.
const raceBuild = false
