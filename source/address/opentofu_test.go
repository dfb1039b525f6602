package address

import (
	"errors"
	"strings"
	"testing"
)

// The tables below port the cases of OpenTofu v1.12.6's
// internal/addrs/module_source_test.go (TestParseModuleSource,
// TestParseModuleSourceRemote, TestParseModuleSourceRegistry) and of the
// OpenTofu registry-address library's module tests, with the results
// OpenTofu gives: its address kind, String() ("PACKAGE[//SUBDIR]", the
// subdirectory before any query string) and subdirectory. They are
// followed by the cases the bug reports found read differently, each
// checked against OpenTofu 1.12.6's parser (go-getter v1.8.6's detectors
// as OpenTofu configures them).

type tofuModuleCase struct {
	kind   string // "local", "registry", "remote"
	str    string // String()
	subdir string
}

var tofuModuleCases = map[string]tofuModuleCase{
	// TestParseModuleSource: local paths.
	"./child":                        {"local", "./child", ""},
	"./nope/../child":                {"local", "./child", ""},
	"../sibling":                     {"local", "../sibling", ""},
	"./nope/../../sibling":           {"local", "../sibling", ""},
	`.\child`:                        {"local", "./child", ""},
	`.\nope\..\child`:                {"local", "./child", ""},
	`..\sibling`:                     {"local", "../sibling", ""},
	`.\nope\..\..\sibling`:           {"local", "../sibling", ""},
	`./nope\nope/why\./please\don't`: {"local", "./nope/nope/why/please/don't", ""},
	// Registry addresses.
	"hashicorp/subnets/cidr":                                   {"registry", DefaultRegistryHost + "/hashicorp/subnets/cidr", ""},
	"hashicorp/subnets/cidr//examples/foo":                     {"registry", DefaultRegistryHost + "/hashicorp/subnets/cidr//examples/foo", "examples/foo"},
	"example.com/awesomecorp/network/happycloud":               {"registry", "example.com/awesomecorp/network/happycloud", ""},
	"example.com/awesomecorp/network/happycloud//examples/foo": {"registry", "example.com/awesomecorp/network/happycloud//examples/foo", "examples/foo"},
	// Remote packages.
	"github.com/hashicorp/terraform-cidr-subnets":                                  {"remote", "git::https://github.com/hashicorp/terraform-cidr-subnets.git", ""},
	"github.com/hashicorp/terraform-cidr-subnets//example/foo":                     {"remote", "git::https://github.com/hashicorp/terraform-cidr-subnets.git//example/foo", "example/foo"},
	"github.com/hashicorp/terraform-cidr-subnets//example/foo?ref=bar":             {"remote", "git::https://github.com/hashicorp/terraform-cidr-subnets.git//example/foo?ref=bar", "example/foo"},
	"github.com/hashicorp/terraform-cidr-subnets//example/foo?":                    {"remote", "git::https://github.com/hashicorp/terraform-cidr-subnets.git//example/foo", "example/foo"},
	"github.com/hashicorp/terraform-cidr-subnets//example/foo?ref=bar/baz":         {"remote", "git::https://github.com/hashicorp/terraform-cidr-subnets.git//example/foo?ref=bar/baz", "example/foo"},
	"git://example.com/code/baz.git":                                               {"remote", "git://example.com/code/baz.git", ""},
	"git://example.com/code/baz.git//bleep/bloop":                                  {"remote", "git://example.com/code/baz.git//bleep/bloop", "bleep/bloop"},
	"git::https://example.com/code/baz.git":                                        {"remote", "git::https://example.com/code/baz.git", ""},
	"git::https://example.com/code/baz.git//bleep/bloop":                           {"remote", "git::https://example.com/code/baz.git//bleep/bloop", "bleep/bloop"},
	"git::https://example.com/code/baz.git//bleep/bloop?otherthing=blah":           {"remote", "git::https://example.com/code/baz.git//bleep/bloop?otherthing=blah", "bleep/bloop"},
	"git::https://example.com/code/baz.git?otherthing=blah":                        {"remote", "git::https://example.com/code/baz.git?otherthing=blah", ""},
	"git::ssh://git@example.com/code/baz.git":                                      {"remote", "git::ssh://git@example.com/code/baz.git", ""},
	"git::ssh://git@example.com/code/baz.git//bleep/bloop":                         {"remote", "git::ssh://git@example.com/code/baz.git//bleep/bloop", "bleep/bloop"},
	"git::git@example.com:code/baz.git":                                            {"remote", "git::ssh://git@example.com/code/baz.git", ""},
	"git::git@example.com:code/baz.git//bleep/bloop":                               {"remote", "git::ssh://git@example.com/code/baz.git//bleep/bloop", "bleep/bloop"},
	"www.googleapis.com/storage/v1/BUCKET_NAME/PATH_TO_MODULE":                     {"remote", "gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH_TO_MODULE", ""},
	"gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH_TO_MODULE":        {"remote", "gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH_TO_MODULE", ""},
	"www.googleapis.com/storage/v1/BUCKET_NAME/PATH/TO/module.zip":                 {"remote", "gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH/TO/module.zip", ""},
	"gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH/TO/module.zip":    {"remote", "gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH/TO/module.zip", ""},
	"s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip":             {"remote", "s3::https://s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip", ""},
	"s3::https://s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip": {"remote", "s3::https://s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip", ""},
	"http://example.com/module":                                                    {"remote", "http://example.com/module", ""},
	"https://example.com/module":                                                   {"remote", "https://example.com/module", ""},
	"https://example.com/module.zip":                                               {"remote", "https://example.com/module.zip", ""},
	"https://example.com/module?archive=tar":                                       {"remote", "https://example.com/module?archive=tar", ""},
	"https://example.com/module?archive=tar&checksum=blah":                         {"remote", "https://example.com/module?archive=tar&checksum=blah", ""},
	"/tmp/foo/example":  {"remote", "file:///tmp/foo/example", ""},
	"/tmp/foo//example": {"remote", "file:///tmp/foo//example", "example"},

	// TestParseModuleSourceRegistry (and the library's TestParseModuleSource).
	"hashicorp/consul/aws":                         {"registry", DefaultRegistryHost + "/hashicorp/consul/aws", ""},
	"hashicorp/consul/aws//foo":                    {"registry", DefaultRegistryHost + "/hashicorp/consul/aws//foo", "foo"},
	DefaultRegistryHost + "/hashicorp/consul/aws":  {"registry", DefaultRegistryHost + "/hashicorp/consul/aws", ""},
	"HashiCorp/Consul/aws":                         {"registry", DefaultRegistryHost + "/HashiCorp/Consul/aws", ""},
	"Example.com:1234/HashiCorp/Consul/aws":        {"registry", "example.com:1234/HashiCorp/Consul/aws", ""},
	"Испытание.com/HashiCorp/Consul/aws":           {"registry", "испытание.com/HashiCorp/Consul/aws", ""},
	"Испытание.com:1234/HashiCorp/Consul/aws//Foo": {"registry", "испытание.com:1234/HashiCorp/Consul/aws//Foo", "Foo"},

	// Read differently before: a query string is never a subdirectory
	// (OpenTofu hides it from go-getter's GitHub detector).
	"github.com/x/y.git?ref=tags/0.2.2":         {"remote", "git::https://github.com/x/y.git?ref=tags/0.2.2", ""},
	"github.com/x/y?ref=tags/0.2.2":             {"remote", "git::https://github.com/x/y.git?ref=tags/0.2.2", ""},
	"github.com/x/y//sub?ref=tags/0.2.2":        {"remote", "git::https://github.com/x/y.git//sub?ref=tags/0.2.2", "sub"},
	"github.com/x/y/sub?ref=tags/0.2.2":         {"remote", "git::https://github.com/x/y.git//sub?ref=tags/0.2.2", "sub"},
	"github.com/org/vpc/a//b":                   {"remote", "git::https://github.com/org/vpc.git//a/b", "a/b"},
	"github.com/org/vpc?depth=1&ref=v1":         {"remote", "git::https://github.com/org/vpc.git?depth=1&ref=v1", ""},
	"git@github.com:org/vpc.git?ref=v1&depth=1": {"remote", "git::ssh://git@github.com/org/vpc.git?depth=1&ref=v1", ""},
	// A subdirectory is path.Clean'd, no more: "///sub" and "//." stay.
	"git::https://example.com/x.git///sub": {"remote", "git::https://example.com/x.git///sub", "/sub"},
	"git::https://example.com/x.git//.":    {"remote", "git::https://example.com/x.git//.", "."},
	"git::https://example.com/x.git//./a":  {"remote", "git::https://example.com/x.git//a", "a"},
	"git::https://example.com/x.git//a/":   {"remote", "git::https://example.com/x.git//a", "a"},
	"github.com/x/y///sub":                 {"remote", "git::https://github.com/x/y.git///sub", "/sub"},
	"github.com/x/y//.":                    {"remote", "git::https://github.com/x/y.git//.", "."},
	"https://example.com/x///y":            {"remote", "https://example.com/x///y", "/y"},
	"oci://example.com/org/vpc///sub":      {"remote", "oci://example.com/org/vpc///sub", "/sub"},
	"hashicorp/consul/aws///sub":           {"registry", DefaultRegistryHost + "/hashicorp/consul/aws///sub", "/sub"},
	"hashicorp/consul/aws//.":              {"registry", DefaultRegistryHost + "/hashicorp/consul/aws//.", "."},
	// A file path is not cleaned.
	"/tmp/../etc": {"remote", "file:///tmp/../etc", ""},
	"/tmp/./foo":  {"remote", "file:///tmp/./foo", ""},
	// A Windows drive path is kept verbatim, on every platform.
	`C:\modules\vpc`:      {"remote", `C:\modules\vpc`, ""},
	"C:/modules/vpc":      {"remote", "C:/modules/vpc", ""},
	`c:\modules\vpc//sub`: {"remote", `c:\modules\vpc//sub`, "sub"},
	// BitBucket: the whole path is the repository.
	"bitbucket.org/HashiCorp/Consul/aws": {"remote", "git::https://bitbucket.org/HashiCorp/Consul/aws.git", ""},
	"bitbucket.org/org/vpc/sub":          {"remote", "git::https://bitbucket.org/org/vpc/sub.git", ""},
	"bitbucket.org/org/vpc//sub?ref=v1":  {"remote", "git::https://bitbucket.org/org/vpc.git//sub?ref=v1", "sub"},
	// S3 and GCS as go-getter rewrites them.
	"bucket.s3.amazonaws.com/vpc.zip":           {"remote", "s3::https://s3.amazonaws.com/bucket/vpc.zip", ""},
	"bucket.s3.eu-west-1.amazonaws.com/vpc.zip": {"remote", "s3::https://s3.eu-west-1.amazonaws.com/bucket/vpc.zip", ""},
	"s3.eu-west-1.amazonaws.com/bucket/vpc.zip": {"remote", "s3::https://eu-west-1.amazonaws.com/s3/bucket/vpc.zip", ""},
	"s3::bucket.s3.amazonaws.com/vpc.zip":       {"remote", "s3::https://s3.amazonaws.com/bucket/vpc.zip", ""},
	// Registry hosts must have a dot; "localhost:8080" is not one.
	"example.com:8080/ns/name/aws":      {"registry", "example.com:8080/ns/name/aws", ""},
	"127.0.0.1:8080/ns/name/aws":        {"registry", "127.0.0.1:8080/ns/name/aws", ""},
	"git::https://localhost:8080/x.git": {"remote", "git::https://localhost:8080/x.git", ""},
}

// tofuModuleErrors are inputs OpenTofu rejects when it parses them.
var tofuModuleErrors = map[string]string{
	"hashicorp/subnets/cidr//../nope": `subdirectory path "../nope" leads outside of the module package`,
	"/tmp/foo//example/../../invalid": `subdirectory path "../invalid" leads outside of the module package`,
	"boop/bloop":                      "OpenTofu cannot detect a supported external module source type for boop/bloop",
	"localhost/ns/name/aws":           "OpenTofu cannot detect a supported external module source type",
	"a.b.c.d.e.f.amazonaws.com/x":     "URL is not a valid S3 URL",
	"storage.googleapis.com/b/o.zip":  "URL is not a valid GCS URL",
	"googleapis.com/storage/v1/b/o":   "OpenTofu cannot detect a supported external module source type",
}

// tofuNotRegistry are the error cases of OpenTofu's
// TestParseModuleSourceRegistry: none is a registry address (OpenTofu then
// tries each as a remote address, and so does this package).
var tofuNotRegistry = []string{
	"---.com/HashiCorp/Consul/aws",
	"foo/var/baz/qux",
	"foo/var/no-no-no",
	"foo/var/" + strings.Repeat("a", 65) + "h",
	"boop!/var/baz",
	"foo.com/var/baz",
	"foo/var/baz?otherthing",
	"github.com/HashiCorp/Consul/aws",
	"bitbucket.org/HashiCorp/Consul/aws",
	"./boop",
	"../boop",
	"localhost:8080/ns/name/aws",
}

// tofuInstallErrors are addresses OpenTofu accepts when it parses them and
// refuses only when it installs them ("download not supported for scheme"
// and the like); this package refuses them when it parses them.
var tofuInstallErrors = map[string]string{
	"dfgdfgsd:dgfhdfghdfghdfg/dfghdfghdfg": `download not supported for scheme "dfgdfgsd"`,
	"localhost:8080/ns/name/aws":           `download not supported for scheme "localhost"`,
	"example.com:org/vpc.git":              `download not supported for scheme "example.com"`,
	"ftp://example.com/x.zip":              `download not supported for scheme "ftp"`,
	"foo::https://example.com/x":           `unsupported module source type "foo"`,
	"git::":                                `the "git::" prefix must be followed by a URL`,
	"git::https:///x.git":                  "has no host",
	"git::https://example.com/x.git//..":   `subdirectory path ".." leads outside of the module package`,
	// go-getter reads a subdirectory only before the query: the ref
	// keeps "//y", which tofu 1.12 fails to check out ("invalid ref").
	"github.com/org/vpc?ref=x//y":      `invalid ref: "x//y"`,
	"github.com/org/vpc//a/b?ref=x//y": `invalid ref: "x//y"`,
}

func TestOpenTofuModuleSources(t *testing.T) {
	for in, want := range tofuModuleCases {
		if _, isErr := tofuModuleErrors[in]; isErr {
			continue
		}
		t.Run(in, func(t *testing.T) {
			got, err := ParseModuleSource(in)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			kind, subdir, _ := describe(got)
			if kind != want.kind || got.String() != want.str || subdir != want.subdir {
				t.Errorf("got %s %q subdir %q, want %s %q subdir %q", kind, got.String(), subdir, want.kind, want.str, want.subdir)
			}
			// What the lock file records reads back as itself.
			if ls := got.LockSource(); ls != "" {
				again, err := ParseModuleSource(ls)
				if err != nil || again.LockSource() != ls {
					t.Errorf("lock source %q reads back as %v, %v", ls, again, err)
				}
			}
		})
	}
	for in, want := range tofuModuleErrors {
		t.Run(in, func(t *testing.T) {
			_, err := ParseModuleSource(in)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(pe.Err.Error(), want) {
				t.Errorf("error = %v, want a *ParseError whose cause contains %q", err, want)
			}
		})
	}
	for _, in := range tofuNotRegistry {
		t.Run(in, func(t *testing.T) {
			if got, err := ParseModuleSource(in); err == nil {
				if _, ok := got.(Registry); ok {
					t.Errorf("read as registry address %s", got)
				}
			}
		})
	}
	for in, want := range tofuInstallErrors {
		t.Run(in, func(t *testing.T) {
			_, err := ParseModuleSource(in)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error = %v, want one containing %q", err, want)
			}
		})
	}
}

// TestWindowsDrivePath checks what a drive path decodes to.
func TestWindowsDrivePath(t *testing.T) {
	r, err := ParseRemote(`C:\modules\vpc//sub`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindFile || r.Address != `C:\modules\vpc` || r.URL != `C:\modules\vpc` || r.Subdir != "sub" {
		t.Errorf("got %+v", r)
	}
}

// describe returns the kind of a parsed source ("local", "registry" or
// "remote"), its subdirectory, and the Remote it is, if it is one.
func describe(src ModuleSource) (kind, subdir string, r Remote) {
	switch src := src.(type) {
	case Local:
		return "local", "", Remote{}
	case Registry:
		return "registry", src.Subdir, Remote{}
	case Remote:
		return "remote", src.Subdir, src
	}
	return "", "", Remote{}
}
