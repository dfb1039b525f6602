// Package lazyre compiles a regular expression on its first use instead of
// at package initialisation: every process pays for the initialisation of
// every package it links, and most runs use few of the patterns (a
// providers lock uses none of the module address, module version or lock
// file module patterns). A pattern with repetition counts, such as
// [0-9a-f]{128}, costs hundreds of allocations to compile.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call, as
// [regexp.MustCompile] does (panicking if expr does not compile), and
// returns the same *regexp.Regexp on every call. It is safe for concurrent
// use.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
