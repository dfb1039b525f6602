package install

import "github.com/tflock/tflock/source"

// first reports whether pkg's family is listed for the first time in this
// run, and counts it then: the memoized source asks a source once per
// family (the module walk and Resolve both list a module's versions), so
// the listing is counted and announced once.
func (l *runLister) first(pkg source.Package) bool {
	k := source.FamilyKey(pkg)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[k] {
		return false
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[k] = true
	l.n++
	return true
}
