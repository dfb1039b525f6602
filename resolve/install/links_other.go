//go:build !unix

package install

import "io/fs"

// hardLinks returns 0: the number of hard links of a file is not known
// here.
func hardLinks(fs.FileInfo) uint64 { return 0 }
