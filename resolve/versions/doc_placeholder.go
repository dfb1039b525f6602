package versions

// TEMPORARY contract; the versions helper replaces this file.
type Version struct{ s string }

func (v Version) IsZero() bool   { return v.s == "" }
func (v Version) String() string { return v.s }
