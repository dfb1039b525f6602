package lockfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// Strings the generated files draw from: plain ones the shortcut writes,
// and ones hclwrite escapes or normalizes (quotes, backslashes, template
// sequences, control characters, non-ASCII, decomposed Unicode), which
// must send the whole file to hclwrite.
var (
	genHosts      = []string{"registry.opentofu.org", "registry.terraform.io", "example.com", "localhost:8443", "xn--bcher-kva.example"}
	genNamespaces = []string{"hashicorp", "integrations", "my-org", "n%{x}", "ns\\x"}
	genTypes      = []string{"aws", "null", "random", "google-beta", "t\ny"}
	genVersions   = []string{"1.0.0", "0.0.1", "5.31.0", "2.0.0-beta.1", "1.2.3+build.7", "1.0.0-rc.1+meta"}
	genConstraint = []string{"", "", "~> 1.0", ">= 1.0.0, < 2.0.0", "1.2.3", "!= 1.0.0", "bogus", "~> 1.0 ${x}", "\"q\"", "é", ">=1.0,<2.0"}
	genOtherHash  = []string{"x:y", "other:scheme", "h1:", "zh:short", "h1:not base64", "z\"h:q", "h1:${a}", "h1:%{b}", "h1:$$x", "h1:%", "h1:\\", "h1:\t", "e\u0301:nfd", "h1:é", "h1:\x7f", ""}
)

// genHash returns a random hash: mostly well-formed h1: and zh: ones,
// some of another scheme or malformed.
func genHash(r *rand.Rand) hash.Hash {
	switch r.IntN(5) {
	case 0, 1:
		b := make([]byte, 32)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return hash.Hash(fmt.Sprintf("zh:%x", b))
	case 2, 3:
		const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		var sb strings.Builder
		sb.WriteString("h1:")
		for range 43 {
			sb.WriteByte(b64[r.IntN(len(b64))])
		}
		sb.WriteString("=")
		return hash.Hash(sb.String())
	default:
		return hash.Hash(genOtherHash[r.IntN(len(genOtherHash))])
	}
}

// genFile returns a random file of provider locks only; escapes says
// whether its strings may need escaping (else they are all plain).
func genFile(r *rand.Rand, escapes bool) *File {
	pick := func(xs []string, plainOnly int) string {
		if !escapes {
			return xs[r.IntN(plainOnly)]
		}
		return xs[r.IntN(len(xs))]
	}
	f := New()
	if r.IntN(2) == 0 {
		f.SetHeader(HeaderTerraform)
	}
	n := r.IntN(8)
	if r.IntN(10) == 0 {
		n = 50
	}
	for range n {
		addr := tfaddr.Provider{Hostname: svchost.Hostname(pick(genHosts, 4)), Namespace: pick(genNamespaces, 3), Type: pick(genTypes, 4)}
		v, err := versions.Parse(genVersions[r.IntN(len(genVersions))])
		if err != nil {
			panic(err)
		}
		lock := &ProviderLock{Addr: addr, Version: v, Constraints: pick(genConstraint, 7)}
		for range r.IntN(10) {
			h := genHash(r)
			if !escapes && !literalString(string(h)) {
				continue
			}
			lock.Hashes = append(lock.Hashes, h)
		}
		if r.IntN(4) == 0 && len(lock.Hashes) > 0 {
			// Unsorted, with a duplicate: as a caller may set them
			// through the lock's pointer.
			lock.Hashes = append(lock.Hashes, lock.Hashes[0])
			r.Shuffle(len(lock.Hashes), func(i, j int) { lock.Hashes[i], lock.Hashes[j] = lock.Hashes[j], lock.Hashes[i] })
		}
		f.providers[addr] = lock
	}
	return f
}

// checkAsHCLWrite checks that f renders as hclwrite renders it, and that
// rendering leaves f as it was.
func checkAsHCLWrite(t *testing.T, f *File) (shortcut bool) {
	t.Helper()
	before := f.Clone()
	hashesBefore := map[tfaddr.Provider][]hash.Hash{}
	for p := range f.Providers() {
		hashesBefore[p.Addr] = slices.Clone(p.Hashes)
	}
	got, shortcut := f.providersOnlyBytes()
	want := f.hclwriteBytes()
	if shortcut && !bytes.Equal(got, want) {
		t.Fatalf("the shortcut writes\n%s\nhclwrite writes\n%s", got, want)
	}
	if b := f.Bytes(); !bytes.Equal(b, want) {
		t.Fatalf("Bytes writes\n%s\nhclwrite writes\n%s", b, want)
	}
	if !Equal(before, f) {
		t.Fatalf("rendering changed the file: %v", Changes(before, f))
	}
	for p := range f.Providers() {
		if !slices.Equal(hashesBefore[p.Addr], p.Hashes) {
			t.Fatalf("rendering changed the hashes of %s: %q, then %q", p.Addr, hashesBefore[p.Addr], p.Hashes)
		}
	}
	return shortcut
}

// TestProvidersOnlyBytesAsHCLWrite renders many generated files of
// provider locks (none, one, many; with and without constraints; none to
// several hashes of h1:, zh: and other schemes, unsorted or repeated;
// both headers; Terraform's default host and others) with the shortcut
// and with hclwrite: the bytes are the same, and a file whose strings
// hclwrite would escape goes to hclwrite.
func TestProvidersOnlyBytesAsHCLWrite(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 3))
	shortcuts, total := 0, 0
	for i := range 1200 {
		f := genFile(r, i%3 == 0)
		if checkAsHCLWrite(t, f) {
			shortcuts++
		}
		total++
	}
	// Every plain file (two thirds) takes the shortcut, and some with
	// escapes go to hclwrite.
	if shortcuts < 800 || shortcuts == total {
		t.Fatalf("%d of %d files took the shortcut", shortcuts, total)
	}
}

// TestProvidersOnlyBytesScope checks which files the shortcut writes:
// files of provider locks only, and no file with a module lock, a lock by
// source, an unknown item, or a lock's unknown argument.
func TestProvidersOnlyBytesScope(t *testing.T) {
	parse := func(src string, lenient bool) *File {
		t.Helper()
		f, err := ParseOptions{Lenient: lenient}.Parse([]byte(src), "x.hcl")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	const prov = "provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"1.0.0\"\n  hashes = [\"h1:" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" + "\"]\n}\n"
	for _, c := range []struct {
		name     string
		file     *File
		shortcut bool
	}{
		{"empty", New(), true},
		{"terraform header, empty", func() *File { f := New(); f.SetHeader(HeaderTerraform); return f }(), true},
		{"providers", parse(prov, false), true},
		{"module", parse(prov+"module \"a\" {\n  source = \"git::https://h/a.git\"\n  ref = \"main\"\n}\n", false), false},
		{"unknown block", parse(prov+"future \"x\" {\n  a = 1\n}\n", true), false},
		{"unknown argument", parse("provider \"registry.opentofu.org/hashicorp/null\" {\n  version = \"1.0.0\"\n  future = [1, 2]\n}\n", true), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := checkAsHCLWrite(t, c.file); got != c.shortcut {
				t.Fatalf("shortcut %v, want %v", got, c.shortcut)
			}
		})
	}
}

// TestBytesLeavesTheFileAlone: rendering a file whose lock's hashes were
// set through its pointer, unsorted and repeated, renders them sorted and
// unique and leaves them as they were. (The writer used to sort them in
// place, leaving a repeated hash's slot empty: the next render wrote an
// empty hash.)
func TestBytesLeavesTheFileAlone(t *testing.T) {
	for _, addr := range []string{"registry.opentofu.org/hashicorp/null", "registry.opentofu.org/hashicorp/n\"ull"} {
		f := New()
		v, _ := versions.Parse("1.0.0")
		a := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
		a.Type = strings.TrimPrefix(addr, "registry.opentofu.org/hashicorp/")
		// Set directly: SetProvider refuses the second address, which
		// hclwrite must escape.
		f.providers[a] = &ProviderLock{Addr: a, Version: v}
		p := f.Provider(a)
		p.Hashes = []hash.Hash{"zh:b", "h1:a", "zh:b"}
		first := f.Bytes()
		if !bytes.Contains(first, []byte("  hashes = [\n    \"h1:a\",\n    \"zh:b\",\n  ]\n")) {
			t.Fatalf("%s: hashes not sorted and unique:\n%s", addr, first)
		}
		if want := []hash.Hash{"zh:b", "h1:a", "zh:b"}; !slices.Equal(p.Hashes, want) {
			t.Fatalf("%s: Bytes changed the lock's hashes to %q", addr, p.Hashes)
		}
		if again := f.Bytes(); !bytes.Equal(again, first) {
			t.Fatalf("%s: a second render differs:\n%s\n---\n%s", addr, first, again)
		}
	}
}

// FuzzProvidersOnlyBytes builds a file of provider locks from the input
// (a line per provider: host, namespace, type, version, constraints and
// hashes separated by "|") and checks that the shortcut writes what
// hclwrite writes, leaving the file as it was.
func FuzzProvidersOnlyBytes(f *testing.F) {
	f.Add(false, "")
	f.Add(true, "registry.terraform.io|hashicorp|aws|5.31.0|~> 5.0|h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=|zh:00")
	f.Add(false, "registry.opentofu.org|hashicorp|null|1.0.0||zh:b|h1:a|zh:b\nexample.com|o|t|1.0.0-beta.1|>= 1.0, < 2.0|x:y")
	f.Add(false, "h|n|t|1.0.0|${x}|h1:%{y}\nh|n|u|1.0.0|\"|\\")
	f.Fuzz(func(t *testing.T, terraform bool, spec string) {
		lf := New()
		if terraform {
			lf.SetHeader(HeaderTerraform)
		}
		for i, line := range strings.Split(spec, "\n") {
			if line == "" {
				continue
			}
			fields := append(strings.Split(line, "|"), "", "", "", "", "")
			host, ns, typ := fields[0], fields[1], fields[2]
			if host == "" {
				host = "registry.opentofu.org"
			}
			if ns == "" {
				ns = "hashicorp"
			}
			if typ == "" {
				typ = fmt.Sprintf("p%d", i)
			}
			v, err := versions.Parse(fields[3])
			if err != nil {
				v, _ = versions.Parse("1.0.0")
			}
			h, err := svchost.ForComparison(host)
			if err != nil || !displayable(h) {
				h = tfaddr.DefaultProviderRegistryHost
			}
			addr := tfaddr.Provider{Hostname: h, Namespace: ns, Type: typ}
			lock := &ProviderLock{Addr: addr, Version: v, Constraints: fields[4]}
			for _, h := range fields[5:] {
				if h != "" {
					lock.Hashes = append(lock.Hashes, hash.Hash(h))
				}
			}
			lf.providers[addr] = lock
		}
		checkAsHCLWrite(t, lf)
	})
}

// displayable reports whether h.ForDisplay (and so a provider address's
// String) does not panic: ForComparison lets some hostnames through that
// it refuses.
func displayable(h svchost.Hostname) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_ = h.ForDisplay()
	return true
}
