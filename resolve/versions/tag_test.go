package versions_test

import (
	"testing"

	"github.com/tflock/tflock/resolve/versions"
)

func TestParseTag(t *testing.T) {
	for _, c := range []struct {
		tag   string
		style versions.TagStyle
		want  string // "" for not a version
	}{
		{"v1.2.0", versions.GitTag, "1.2.0"},
		{"1.2.0", versions.GitTag, "1.2.0"},
		{"vv1.2.0", versions.GitTag, ""},
		{"V1.2.0", versions.GitTag, ""},
		{"1.2", versions.GitTag, ""},
		{"v1.2.0+b", versions.GitTag, "1.2.0+b"},
		{"1.2.0_b", versions.GitTag, ""},
		{"1.2.0_build", versions.OCITag, "1.2.0+build"},
		{"1.2.0", versions.OCITag, "1.2.0"},
		{"v1.2.0", versions.OCITag, ""},
		{"latest", versions.OCITag, ""},
		{"1.2.0", versions.TagStyle(9), ""},
	} {
		v, ok := versions.ParseTag(c.tag, c.style)
		if got := map[bool]string{true: v.String()}[ok]; got != c.want {
			t.Errorf("ParseTag(%q, %d) = %q, %v; want %q", c.tag, c.style, v, ok, c.want)
		}
		if ok {
			if back, _ := versions.ParseTag(versions.Tag(v, c.style), c.style); back != v {
				t.Errorf("Tag(%s, %d) = %q does not read back", v, c.style, versions.Tag(v, c.style))
			}
		}
	}
}
