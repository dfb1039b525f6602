package address

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expectations follow OpenTofu's addrs.ParseModuleSource and the
// go-getter detectors it configures (GitHub, Git, BitBucket, GCS, S3, file),
// and OpenTofu's OCI module getter.
func TestParseModuleSource(t *testing.T) {
	tests := map[string]struct {
		kind       string // local, registry, remote
		str        string
		pkg        string
		lock       string
		subdir     string
		remoteKind RemoteKind
		ref        string
		depth      int
		tag        string
		digest     string
		url        string
	}{
		"./foo":        {kind: "local", str: "./foo"},
		"./foo/../bar": {kind: "local", str: "./bar"},
		"../foo//bar":  {kind: "local", str: "../foo/bar"},
		`.\foo\bar`:    {kind: "local", str: "./foo/bar"},
		`..\foo`:       {kind: "local", str: "../foo"},
		"./":           {kind: "local", str: "./."},
		"hashicorp/consul/aws": {kind: "registry",
			str: "registry.opentofu.org/hashicorp/consul/aws", pkg: "registry.opentofu.org/hashicorp/consul/aws",
			lock: "registry.opentofu.org/hashicorp/consul/aws"},
		"hashicorp/consul/aws//modules/x": {kind: "registry", subdir: "modules/x",
			str: "registry.opentofu.org/hashicorp/consul/aws//modules/x", pkg: "registry.opentofu.org/hashicorp/consul/aws",
			lock: "registry.opentofu.org/hashicorp/consul/aws//modules/x"},
		"registry.terraform.io/hashicorp/consul/aws": {kind: "registry",
			str: "registry.terraform.io/hashicorp/consul/aws", pkg: "registry.terraform.io/hashicorp/consul/aws",
			lock: "registry.terraform.io/hashicorp/consul/aws"},
		"Example.COM/ns/name/aws": {kind: "registry",
			str: "example.com/ns/name/aws", pkg: "example.com/ns/name/aws", lock: "example.com/ns/name/aws"},
		"git::https://example.com/vpc.git": {kind: "remote", remoteKind: KindGit,
			str: "git::https://example.com/vpc.git", pkg: "git::https://example.com/vpc.git",
			lock: "git::https://example.com/vpc.git", url: "https://example.com/vpc.git"},
		"git::https://example.com/vpc.git//modules/a?ref=v1.2.0": {kind: "remote", remoteKind: KindGit,
			str: "git::https://example.com/vpc.git//modules/a?ref=v1.2.0", pkg: "git::https://example.com/vpc.git",
			lock: "git::https://example.com/vpc.git//modules/a", subdir: "modules/a", ref: "v1.2.0",
			url: "https://example.com/vpc.git"},
		"git::ssh://git@example.com/org/vpc.git?ref=main&depth=1": {kind: "remote", remoteKind: KindGit,
			str: "git::ssh://git@example.com/org/vpc.git?ref=main&depth=1", pkg: "git::ssh://git@example.com/org/vpc.git?depth=1",
			lock: "git::ssh://git@example.com/org/vpc.git", ref: "main", depth: 1,
			url: "ssh://git@example.com/org/vpc.git"},
		"git@example.com:org/vpc.git": {kind: "remote", remoteKind: KindGit,
			str: "git::ssh://git@example.com/org/vpc.git", pkg: "git::ssh://git@example.com/org/vpc.git",
			lock: "git::ssh://git@example.com/org/vpc.git", url: "ssh://git@example.com/org/vpc.git"},
		"git@example.com:org/vpc.git//sub?ref=v2&depth=3": {kind: "remote", remoteKind: KindGit,
			str: "git::ssh://git@example.com/org/vpc.git//sub?depth=3&ref=v2", pkg: "git::ssh://git@example.com/org/vpc.git?depth=3",
			lock: "git::ssh://git@example.com/org/vpc.git//sub", subdir: "sub", ref: "v2", depth: 3,
			url: "ssh://git@example.com/org/vpc.git"},
		"git::git@example.com:org/vpc.git": {kind: "remote", remoteKind: KindGit,
			str: "git::ssh://git@example.com/org/vpc.git", pkg: "git::ssh://git@example.com/org/vpc.git",
			lock: "git::ssh://git@example.com/org/vpc.git", url: "ssh://git@example.com/org/vpc.git"},
		"github.com/org/vpc": {kind: "remote", remoteKind: KindGit,
			str: "git::https://github.com/org/vpc.git", pkg: "git::https://github.com/org/vpc.git",
			lock: "git::https://github.com/org/vpc.git", url: "https://github.com/org/vpc.git"},
		"github.com/org/vpc/modules/a?ref=v1": {kind: "remote", remoteKind: KindGit,
			str: "git::https://github.com/org/vpc.git//modules/a?ref=v1", pkg: "git::https://github.com/org/vpc.git",
			lock: "git::https://github.com/org/vpc.git//modules/a", subdir: "modules/a", ref: "v1",
			url: "https://github.com/org/vpc.git"},
		"github.com/org/vpc.git//x/y": {kind: "remote", remoteKind: KindGit,
			str: "git::https://github.com/org/vpc.git//x/y", pkg: "git::https://github.com/org/vpc.git",
			lock: "git::https://github.com/org/vpc.git//x/y", subdir: "x/y", url: "https://github.com/org/vpc.git"},
		"github.com/org/vpc/a//b": {kind: "remote", remoteKind: KindGit,
			// the detector's subdirectory goes first
			str: "git::https://github.com/org/vpc.git//a/b", pkg: "git::https://github.com/org/vpc.git",
			lock: "git::https://github.com/org/vpc.git//a/b", subdir: "a/b", url: "https://github.com/org/vpc.git"},
		"bitbucket.org/org/vpc": {kind: "remote", remoteKind: KindGit,
			str: "git::https://bitbucket.org/org/vpc.git", pkg: "git::https://bitbucket.org/org/vpc.git",
			lock: "git::https://bitbucket.org/org/vpc.git", url: "https://bitbucket.org/org/vpc.git"},
		"git://example.com/vpc.git": {kind: "remote", remoteKind: KindGit,
			str: "git://example.com/vpc.git", pkg: "git://example.com/vpc.git",
			lock: "git://example.com/vpc.git", url: "git://example.com/vpc.git"},
		"oci://example.com/org/vpc": {kind: "remote", remoteKind: KindOCI, tag: "latest",
			str: "oci://example.com/org/vpc", pkg: "oci://example.com/org/vpc",
			lock: "oci://example.com/org/vpc", url: "oci://example.com/org/vpc"},
		"oci://example.com:5000/vpc//sub?tag=1.2.0": {kind: "remote", remoteKind: KindOCI, tag: "1.2.0",
			str: "oci://example.com:5000/vpc//sub?tag=1.2.0", pkg: "oci://example.com:5000/vpc",
			lock: "oci://example.com:5000/vpc//sub", subdir: "sub", url: "oci://example.com:5000/vpc"},
		"oci://example.com/vpc?digest=sha256:" + strings.Repeat("ab", 32): {kind: "remote", remoteKind: KindOCI,
			digest: "sha256:" + strings.Repeat("ab", 32),
			str:    "oci://example.com/vpc?digest=sha256:" + strings.Repeat("ab", 32), pkg: "oci://example.com/vpc",
			lock: "oci://example.com/vpc", url: "oci://example.com/vpc"},
		"https://example.com/vpc.zip": {kind: "remote", remoteKind: KindHTTP,
			str: "https://example.com/vpc.zip", pkg: "https://example.com/vpc.zip",
			lock: "https://example.com/vpc.zip", url: "https://example.com/vpc.zip"},
		"https://example.com/vpc.zip//mod?archive=zip": {kind: "remote", remoteKind: KindHTTP, subdir: "mod",
			str: "https://example.com/vpc.zip//mod?archive=zip", pkg: "https://example.com/vpc.zip?archive=zip",
			lock: "https://example.com/vpc.zip//mod?archive=zip", url: "https://example.com/vpc.zip?archive=zip"},
		"s3::https://s3.amazonaws.com/bucket/vpc.zip": {kind: "remote", remoteKind: KindS3,
			str: "s3::https://s3.amazonaws.com/bucket/vpc.zip", pkg: "s3::https://s3.amazonaws.com/bucket/vpc.zip",
			lock: "s3::https://s3.amazonaws.com/bucket/vpc.zip", url: "https://s3.amazonaws.com/bucket/vpc.zip"},
		// go-getter rewrites a virtual-host S3 address to path style.
		"bucket.s3.amazonaws.com/vpc.zip": {kind: "remote", remoteKind: KindS3,
			str: "s3::https://s3.amazonaws.com/bucket/vpc.zip", pkg: "s3::https://s3.amazonaws.com/bucket/vpc.zip",
			lock: "s3::https://s3.amazonaws.com/bucket/vpc.zip", url: "https://s3.amazonaws.com/bucket/vpc.zip"},
		"gcs::https://www.googleapis.com/storage/v1/bucket/vpc.zip": {kind: "remote", remoteKind: KindGCS,
			str: "gcs::https://www.googleapis.com/storage/v1/bucket/vpc.zip", pkg: "gcs::https://www.googleapis.com/storage/v1/bucket/vpc.zip",
			lock: "gcs::https://www.googleapis.com/storage/v1/bucket/vpc.zip", url: "https://www.googleapis.com/storage/v1/bucket/vpc.zip"},
		"hg::https://example.com/vpc": {kind: "remote", remoteKind: KindHg,
			str: "hg::https://example.com/vpc", pkg: "hg::https://example.com/vpc",
			lock: "hg::https://example.com/vpc", url: "https://example.com/vpc"},
		"/srv/modules/vpc": {kind: "remote", remoteKind: KindFile,
			str: "file:///srv/modules/vpc", pkg: "file:///srv/modules/vpc",
			lock: "file:///srv/modules/vpc", url: "file:///srv/modules/vpc"},
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			got, err := ParseModuleSource(in)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			kind, subdir, r := describe(got)
			type view struct {
				Kind, Str, Pkg, Lock, Subdir, Ref, Tag, Digest, URL string
				RemoteKind                                          RemoteKind
				Depth                                               int
			}
			gotV := view{kind, got.String(), got.Package(), got.LockSource(), subdir, r.Ref, r.Tag, r.Digest, r.URL, r.Kind, r.Depth}
			wantV := view{want.kind, want.str, want.pkg, want.lock, want.subdir, want.ref, want.tag, want.digest, want.url, want.remoteKind, want.depth}
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			// The canonical form parses to itself.
			again, err := ParseModuleSource(got.String())
			if err != nil {
				t.Fatalf("canonical form %q does not parse: %v", got.String(), err)
			}
			if again.String() != got.String() {
				t.Errorf("canonical form not stable: %q then %q", got.String(), again.String())
			}
			// The lock source parses to the same package and subdirectory.
			if got.LockSource() != "" {
				lock, err := ParseModuleSource(got.LockSource())
				if err != nil {
					t.Fatalf("lock source %q does not parse: %v", got.LockSource(), err)
				}
				if lock.LockSource() != got.LockSource() {
					t.Errorf("lock source %q reparses as package %q, lock source %q", got.LockSource(), lock.Package(), lock.LockSource())
				}
			}
		})
	}
}

func TestParseModuleSourceErrors(t *testing.T) {
	tests := map[string]string{
		"":                                   "must not be empty",
		"foo":                                "OpenTofu cannot detect a supported external module source type for foo",
		"hashicorp/consul":                   "OpenTofu cannot detect a supported external module source type",
		"hashicorp/consul/aws?ref=v1":        "OpenTofu cannot detect a supported external module source type",
		"git::":                              `the "git::" prefix must be followed by a URL`,
		"git:://sub":                         `the "git::" prefix must be followed by a URL`,
		"git::https://example.com/x.git//..": `subdirectory path ".." leads outside of the module package`,
		"git::https://example.com/x.git//a/../../b": `subdirectory path "../b" leads outside of the module package`,
		"github.com/org":                             "GitHub URLs should be github.com/username/repo",
		"git::https://example.com/x.git?ref=":        `the "ref" argument must not be empty`,
		"git::https://example.com/x.git?ref=a&ref=b": `too many "ref" arguments`,
		// go-getter looks for the subdirectory only before the query: the
		// ref keeps "//sub", which tofu fails to check out.
		"git::https://example.com/vpc.git?ref=v1.2.0//modules/a":               `invalid ref: "v1.2.0//modules/a": a git ref never contains "//"`,
		"git::https://example.com/vpc.git?depth=1&ref=v1//a":                   `invalid ref: "v1//a"`,
		"git::https://example.com/x.git?depth=x":                               `invalid "depth" argument "x"`,
		"git::https://example.com/x.git?depth=0":                               `invalid "depth" argument "0"`,
		"git::https://example.com/x.git?sshkey=%21":                            `invalid "sshkey" argument`,
		"git::https:///x.git":                                                  "has no host",
		"foo::https://example.com/x":                                           `unsupported module source type "foo"`,
		"ftp://example.com/x.zip":                                              `download not supported for scheme "ftp"`,
		"oci://example.com/vpc?tag=a&digest=sha256:" + strings.Repeat("0", 64): `cannot set both "tag" and "digest" arguments`,
		"oci://example.com/vpc?tag=":                                           "tag argument must not be empty",
		"oci://example.com/vpc?digest=":                                        "digest argument must not be empty",
		"oci://example.com/vpc?tag=a&tag=b":                                    `too many "tag" arguments`,
		"oci://example.com/vpc?tag=-x":                                         `invalid reference: invalid tag "-x"`,
		"oci://example.com/vpc?digest=sha256:abc":                              "invalid digest: invalid checksum digest length",
		"oci://example.com/vpc?digest=md5:abc":                                 "invalid digest: unsupported digest algorithm",
		"oci://example.com/vpc?ref=v1":                                         `unsupported argument "ref"`,
		"oci://example.com/vpc?ref=v1&x=y":                                     "unsupported arguments: ref, x",
		"oci://example.com/VPC":                                                `invalid reference: invalid repository "VPC"`,
		"oci://example.com":                                                    `invalid reference: invalid repository ""`,
		"oci:///vpc":                                                           `invalid reference: invalid registry ""`,
		"oci::https://example.com/vpc":                                         "oci source type only supports oci URL scheme",
		// go-getter takes "archive" to mean a single file, which
		// OpenTofu's OCI getter refuses.
		"oci://example.com/vpc?archive=zip": `the "archive" argument is not allowed for OCI sources`,
		"oci://example.com/vpc?archive=":    `unsupported argument "archive"`,
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			got, err := ParseModuleSource(in)
			if err == nil {
				t.Fatalf("got %#v, want error containing %q", got, want)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Kind != "module" {
				t.Errorf("error %T is not a module *ParseError", err)
			}
		})
	}
}

func TestErrUnknownSourceType(t *testing.T) {
	_, err := ParseModuleSource("modules/vpc")
	if !errors.Is(err, ErrUnknownSourceType) {
		t.Fatalf("got %v, want ErrUnknownSourceType", err)
	}
}

func TestDefaultRegistryHost(t *testing.T) {
	src, err := ParseModuleSourceWith("hashicorp/consul/aws", Options{DefaultRegistryHost: "registry.terraform.io"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := src.Package(), "registry.terraform.io/hashicorp/consul/aws"; got != want {
		t.Errorf("Package() = %q, want %q", got, want)
	}
	if got, want := src.ForDisplay(), "registry.terraform.io/hashicorp/consul/aws"; got != want {
		t.Errorf("ForDisplay() = %q, want %q", got, want)
	}
	src = MustParseModuleSource("hashicorp/consul/aws//x")
	if got, want := src.ForDisplay(), "hashicorp/consul/aws//x"; got != want {
		t.Errorf("ForDisplay() = %q, want %q", got, want)
	}
	if _, err := ParseModuleSourceWith("a/b/c", Options{DefaultRegistryHost: "not a host"}); err == nil {
		t.Error("invalid default host accepted")
	}
}

func TestCredentialsNeverInErrors(t *testing.T) {
	for _, in := range []string{
		"git::https://alice:s3cret@example.com/x.git?depth=bad",
		"git::https://s3cret@example.com/x.git?ref=",
		"git::https://example.com/x.git?depth=1&sshkey=s3cret!",
		"foo::https://alice:s3cret@example.com/x",
	} {
		_, err := ParseModuleSource(in)
		if err == nil {
			t.Fatalf("%q: no error", in)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error leaks the credential: %v", in, err)
		}
	}
}

func TestSSHKeyNotInLockSource(t *testing.T) {
	r, err := ParseRemote("git::ssh://git@example.com/x.git?ref=v1&sshkey=QUJD&depth=2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Package(), "git::ssh://git@example.com/x.git?depth=2&sshkey=QUJD"; got != want {
		t.Errorf("Package() = %q, want %q", got, want)
	}
	if got, want := r.LockSource(), "git::ssh://git@example.com/x.git"; got != want {
		t.Errorf("LockSource() = %q, want %q", got, want)
	}
	if r.SSHKey != "QUJD" || r.Depth != 2 || r.Ref != "v1" {
		t.Errorf("decoded %+v", r)
	}
}

func TestRedact(t *testing.T) {
	tests := map[string]string{
		"https://alice:pw@example.com/x.git":            "https://REDACTED@example.com/x.git",
		"https://token@example.com/x":                   "https://REDACTED@example.com/x",
		"ssh://git@example.com/x.git":                   "ssh://git@example.com/x.git",
		"git::https://example.com/x?a=1&sshkey=QUJD/+=": "git::https://example.com/x?a=1&sshkey=REDACTED",
		"fetch https://u:p@a/x and https://b/y?q=a@b":   "fetch https://REDACTED@a/x and https://b/y?q=a@b",
		"no url here": "no url here",
	}
	for in, want := range tests {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOpenTofuCases runs the inputs of OpenTofu's addrs.TestParseModuleSource
// (and TestParseModuleSourceRegistry) that tflock accepts, with the result
// OpenTofu's String method gives there: "PACKAGE[//SUBDIR]", the
// subdirectory before any query string.
func TestOpenTofuCases(t *testing.T) {
	tests := map[string]string{
		"./child":                              "./child",
		"./nope/../child":                      "./child",
		"../sibling":                           "../sibling",
		"./nope/../../sibling":                 "../sibling",
		`.\child`:                              "./child",
		`.\nope\..\child`:                      "./child",
		`..\sibling`:                           "../sibling",
		`.\nope\..\..\sibling`:                 "../sibling",
		`./nope\nope/why\./please\don't`:       "./nope/nope/why/please/don't",
		"hashicorp/subnets/cidr":               "registry.opentofu.org/hashicorp/subnets/cidr",
		"hashicorp/subnets/cidr//examples/foo": "registry.opentofu.org/hashicorp/subnets/cidr//examples/foo",
		"example.com/awesomecorp/network/happycloud//examples/foo":                     "example.com/awesomecorp/network/happycloud//examples/foo",
		"registry.opentofu.org/hashicorp/consul/aws":                                   "registry.opentofu.org/hashicorp/consul/aws",
		"HashiCorp/Consul/aws":                                                         "registry.opentofu.org/HashiCorp/Consul/aws",
		"Example.com:1234/HashiCorp/Consul/aws":                                        "example.com:1234/HashiCorp/Consul/aws",
		"Испытание.com:1234/HashiCorp/Consul/aws//Foo":                                 "испытание.com:1234/HashiCorp/Consul/aws//Foo",
		"github.com/hashicorp/terraform-cidr-subnets":                                  "git::https://github.com/hashicorp/terraform-cidr-subnets.git",
		"github.com/hashicorp/terraform-cidr-subnets//example/foo":                     "git::https://github.com/hashicorp/terraform-cidr-subnets.git//example/foo",
		"git://example.com/code/baz.git":                                               "git://example.com/code/baz.git",
		"git://example.com/code/baz.git//bleep/bloop":                                  "git://example.com/code/baz.git//bleep/bloop",
		"git::https://example.com/code/baz.git":                                        "git::https://example.com/code/baz.git",
		"git::https://example.com/code/baz.git//bleep/bloop":                           "git::https://example.com/code/baz.git//bleep/bloop",
		"git::https://example.com/code/baz.git//bleep/bloop?otherthing=blah":           "git::https://example.com/code/baz.git//bleep/bloop?otherthing=blah",
		"git::https://example.com/code/baz.git?otherthing=blah":                        "git::https://example.com/code/baz.git?otherthing=blah",
		"git::ssh://git@example.com/code/baz.git":                                      "git::ssh://git@example.com/code/baz.git",
		"git::ssh://git@example.com/code/baz.git//bleep/bloop":                         "git::ssh://git@example.com/code/baz.git//bleep/bloop",
		"git::git@example.com:code/baz.git":                                            "git::ssh://git@example.com/code/baz.git",
		"git::git@example.com:code/baz.git//bleep/bloop":                               "git::ssh://git@example.com/code/baz.git//bleep/bloop",
		"www.googleapis.com/storage/v1/BUCKET_NAME/PATH_TO_MODULE":                     "gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH_TO_MODULE",
		"gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH/TO/module.zip":    "gcs::https://www.googleapis.com/storage/v1/BUCKET_NAME/PATH/TO/module.zip",
		"s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip":             "s3::https://s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip",
		"s3::https://s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip": "s3::https://s3-eu-west-1.amazonaws.com/examplecorp-terraform-modules/vpc.zip",
		"http://example.com/module":                                                    "http://example.com/module",
		"https://example.com/module.zip":                                               "https://example.com/module.zip",
		"https://example.com/module?archive=tar&checksum=blah":                         "https://example.com/module?archive=tar&checksum=blah",
		"/tmp/foo/example":  "file:///tmp/foo/example",
		"/tmp/foo//example": "file:///tmp/foo//example",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			got, err := ParseModuleSource(in)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Errorf("String() = %q, want %q", got.String(), want)
			}
		})
	}
	errs := map[string]string{
		"hashicorp/subnets/cidr//../nope": `subdirectory path "../nope" leads outside of the module package`,
		"/tmp/foo//example/../../invalid": `subdirectory path "../invalid" leads outside of the module package`,
		"boop/bloop":                      "OpenTofu cannot detect a supported external module source type for boop/bloop",
	}
	for in, want := range errs {
		t.Run(in, func(t *testing.T) {
			_, err := ParseModuleSource(in)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Err.Error() != want {
				t.Errorf("error = %v, want a *ParseError with cause %q", err, want)
			}
		})
	}
}
