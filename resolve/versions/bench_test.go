package versions_test

import (
	"strconv"
	"testing"

	"github.com/tflock/tflock/resolve/versions"
)

const benchConstraint = "~> 3.5, >= 3.14.0, >= 3.29.0, >= 3.38.0, ~> 3.40, >= 3.43.0, < 4.0.0"

func BenchmarkParseConstraints(b *testing.B) {
	for b.Loop() {
		if _, err := versions.ParseConstraints(benchConstraint); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConstraintsString(b *testing.B) {
	c := versions.MustParseConstraints(benchConstraint)
	for b.Loop() {
		_ = c.String()
	}
}

func BenchmarkNewest(b *testing.B) {
	c := versions.MustParseConstraints(benchConstraint)
	list := make([]versions.Version, 0, 500)
	for major := range 5 {
		for minor := range 100 {
			list = append(list, versions.MustParse(versionString(major, minor)))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, ok := versions.Newest(list, c); !ok {
			b.Fatal("none")
		}
	}
}

func versionString(major, minor int) string {
	return strconv.Itoa(major) + "." + strconv.Itoa(minor) + ".0"
}
