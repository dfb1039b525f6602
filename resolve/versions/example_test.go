package versions_test

import (
	"fmt"

	"github.com/tflock/tflock/resolve/versions"
)

func ExampleParseConstraints() {
	c, err := versions.ParseConstraints("~> 2.3, != 2.5.0")
	if err != nil {
		panic(err)
	}
	for _, s := range []string{"2.2.0", "2.3.0", "2.5.0", "2.9.1", "3.0.0"} {
		fmt.Println(s, c.Allows(versions.MustParse(s)))
	}
	// Output:
	// 2.2.0 false
	// 2.3.0 true
	// 2.5.0 false
	// 2.9.1 true
	// 3.0.0 false
}

func ExampleParseConstraints_error() {
	_, err := versions.ParseConstraints(">= 1.0, < v2.0")
	fmt.Println(err)
	_, err = versions.ParseConstraints("=> 1.1")
	fmt.Println(err)
	// Output:
	// invalid specification "< v2.0": a "v" prefix should not be used when specifying versions
	// invalid specification "=> 1.1": invalid constraint operator "=>"; did you mean ">="?
}

func ExampleConstraints_String() {
	// The form OpenTofu writes to the lock file.
	for _, s := range []string{"~> 3", ">= 2, >= 1.2, < 1.3", "= 1.2.0, 1.2.0"} {
		fmt.Println(versions.MustParseConstraints(s))
	}
	// Output:
	// ~> 3.0
	// >= 1.2.0, < 1.3.0, >= 2.0.0
	// 1.2.0
}

func ExampleParseModuleConstraints() {
	// In the module dialect "~> 1" has no upper bound, and a "v" prefix is
	// accepted.
	c := versions.MustParseModuleConstraints("~> v1")
	fmt.Println(c, c.Allows(versions.MustParse("7.0.0")))
	p := versions.MustParseConstraints("~> 1")
	fmt.Println(p, p.Allows(versions.MustParse("7.0.0")))
	// Output:
	// ~> 1 true
	// ~> 1.0 false
}

func ExampleNewest() {
	var list []versions.Version
	for _, s := range []string{"1.0.0", "1.4.2", "2.1.0", "2.2.0-beta.1"} {
		list = append(list, versions.MustParse(s))
	}
	v, ok := versions.Newest(list, versions.MustParseConstraints(">= 1.0, < 2.0"))
	fmt.Println(v, ok)
	v, ok = versions.Newest(list, versions.Constraints{})
	fmt.Println(v, ok)
	v, ok = versions.Newest(list, versions.MustParseConstraints("2.2.0-beta.1"))
	fmt.Println(v, ok)
	_, ok = versions.Newest(list, versions.MustParseConstraints("> 3"))
	fmt.Println(ok)
	// Output:
	// 1.4.2 true
	// 2.1.0 true
	// 2.2.0-beta.1 true
	// false
}

func ExampleIntersect() {
	root := versions.MustParseConstraints(">= 4.0")
	child := versions.MustParseConstraints("~> 4.2, != 4.3.1")
	fmt.Println(versions.Intersect(root, child))
	// Output:
	// >= 4.0.0, ~> 4.2, != 4.3.1
}

func ExampleSort() {
	vs := []versions.Version{
		versions.MustParse("1.10.0"),
		versions.MustParse("1.2.0"),
		versions.MustParse("1.2.0-rc.1"),
	}
	versions.Sort(vs)
	fmt.Println(vs)
	// Output:
	// [1.2.0-rc.1 1.2.0 1.10.0]
}

func ExampleParseModuleVersion() {
	v := versions.MustParseModuleVersion("v1.2")
	fmt.Println(v, v == versions.MustParse("1.2.0"))
	// Output:
	// 1.2.0 true
}
