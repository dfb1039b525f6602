package main

import "embed"

// sampleFS holds the sample configuration, lock file included.
//
//go:embed all:sample
var sampleFS embed.FS
