package registry

// SetStreamMin sets the smallest package handed over while it downloads,
// until the test ends.
func SetStreamMin(t interface{ Cleanup(func()) }, n int64) {
	old := streamMin
	streamMin = n
	t.Cleanup(func() { streamMin = old })
}
