package versions

import "strings"

// TagStyle is how a kind of module source writes a version as a tag: the
// one rule by which the git and OCI sources list versions, and by which
// a managed ref or tag is read back as the version it names.
type TagStyle int

const (
	// GitTag is a git tag: a strict semantic version with or without a
	// "v" prefix ("v1.2.0", "1.2.0").
	GitTag TagStyle = iota
	// OCITag is an OCI tag: a strict semantic version with "+" written
	// "_" ("1.2.0_build"), as OCI tags cannot hold "+" (OpenTofu's
	// convention).
	OCITag
)

// ParseTag returns the version tag names in the given style; false for
// any other tag.
func ParseTag(tag string, style TagStyle) (Version, bool) {
	switch style {
	case GitTag:
		tag = strings.TrimPrefix(tag, "v")
	case OCITag:
		tag = strings.ReplaceAll(tag, "_", "+")
	default:
		return Version{}, false
	}
	v, err := Parse(tag)
	if err != nil {
		return Version{}, false
	}
	return v, true
}

// Tag spells v as a tag in the given style: "1.2.0" for git (the form
// without a "v" prefix), "1.2.0_build" for OCI.
func Tag(v Version, style TagStyle) string {
	if style == OCITag {
		return strings.ReplaceAll(v.String(), "+", "_")
	}
	return v.String()
}
