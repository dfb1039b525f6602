package install

// SetReplaceFile replaces the rename that puts a staged configuration
// file in place, for a test that makes it fail; the returned function
// restores it.
func SetReplaceFile(f func(oldpath, newpath string) error) (restore func()) {
	prev := replaceFile
	replaceFile = f
	return func() { replaceFile = prev }
}
