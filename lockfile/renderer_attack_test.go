package lockfile

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/resolve/versions"
)

// attackLock builds a provider lock from hostile strings, the host used
// as it is (not normalized) when it can be displayed at all.
func attackLock(host, ns, typ, version, constraints string, hashes []string) *ProviderLock {
	h := svchost.Hostname(host)
	if host == "" || !displayable(h) {
		h = tfaddr.DefaultProviderRegistryHost
	}
	v, err := versions.Parse(version)
	if err != nil {
		v, _ = versions.Parse("1.0.0")
	}
	lock := &ProviderLock{Addr: tfaddr.Provider{Hostname: h, Namespace: ns, Type: typ}, Version: v, Constraints: constraints}
	for _, s := range hashes {
		lock.Hashes = append(lock.Hashes, hash.Hash(s))
	}
	return lock
}

// checkNoLie checks the promise WriteFile relies on to skip its
// parse-back: a file that plain() passes is rendered as hclwrite renders
// it, is parsed strictly without error, and reads back as the same file.
// And whatever SetProvider accepts is written by WriteFile into a file
// that parses back as the same file.
func checkNoLie(t *testing.T, locks []*ProviderLock) {
	t.Helper()
	direct := New()
	for _, l := range locks {
		direct.providers[l.Addr] = l
	}
	if got, want := direct.Bytes(), direct.hclwriteBytes(); !bytes.Equal(got, want) {
		t.Fatalf("Bytes writes\n%s\nhclwrite writes\n%s", got, want)
	}
	if direct.plain() {
		back, err := Parse(direct.Bytes(), "attack.hcl")
		if err != nil {
			t.Fatalf("a file judged plain (no parse-back) does not parse: %v\n%s", err, direct.Bytes())
		}
		if !Equal(back, direct) {
			t.Fatalf("a file judged plain reads back otherwise: %v\n%s", Changes(direct, back), direct.Bytes())
		}
	}
	set := New()
	for _, l := range locks {
		_ = set.SetProvider(l.clone()) // refusals are fine
	}
	path := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	if err := WriteFile(path, set); err != nil {
		t.Fatalf("WriteFile of locks SetProvider accepted: %v", err)
	}
	back, err := ParseOptions{}.ParseFile(path)
	if err != nil {
		t.Fatalf("the file WriteFile wrote does not parse: %v", err)
	}
	if !Equal(back, set) {
		t.Fatalf("the file WriteFile wrote reads back otherwise: %v", Changes(set, back))
	}
}

// Attack: addresses, versions, constraints and hashes a hostile registry
// or caller can produce, against the shortcut renderer and the
// plain-lock judgement that skips the parse-back.
func TestAttackRendererHostileStrings(t *testing.T) {
	long := strings.Repeat("a", 5000)
	hosts := []string{"registry.opentofu.org", "REGISTRY.opentofu.org", "registry.opentofu.org:443", "registry.opentofu.org:8443", "example.com.", "xn--bcher-kva.example", "bücher.example", "localhost", "127.0.0.1", "[::1]:8080", "h$", "h%{x}"}
	names := []string{"hashicorp", "HashiCorp", "-", "a-", "terraform", "builtin", "-", "a_b", "a.b", "${x}", "%{x}", "a$", "a%", "$${x}", "é", "e\u0301", "a\x00b", "a\tb", "a\"b", "a\\b", long}
	vers := []string{"1.0.0", "1.0.0-beta.1", "1.0.0+meta", "01.0.0", "1.0", "v1.0.0", "1.0.0-${x}"}
	cons := []string{"", "~> 1.0", ">=1.0,<2.0", "1.0.0", "= 1.0.0", "~> 1.0 ${x}", "\"", "\\", "%{x}", "\n", "> 1.0.0-beta", "!= 1.0.0, != 1.0.0", long}
	hashes := [][]string{nil,
		{"h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},
		{"zh:" + strings.Repeat("0", 64), "zh:" + strings.Repeat("0", 64)},
		{"zh:" + strings.Repeat("A", 64)},
		{"h1:${x}", "h1:%{x}", "h1:$${", "h1:\"", "h1:\\", "h1:\n", "h1:é", "h1:\x7f", ""},
		{"x:y", "h1:", "zh:", "h1:" + long},
	}
	n := 0
	for _, h := range hosts {
		for i, ns := range names {
			typ := names[(i+3)%len(names)]
			v := vers[n%len(vers)]
			c := cons[n%len(cons)]
			hs := hashes[n%len(hashes)]
			n++
			t.Run(fmt.Sprintf("%d", n), func(t *testing.T) {
				checkNoLie(t, []*ProviderLock{attackLock(h, ns, typ, v, c, hs)})
			})
		}
	}
}

// FuzzAttackRenderer: as TestAttackRendererHostileStrings on any input
// (a line per provider: host, namespace, type, version, constraints and
// hashes separated by "|").
func FuzzAttackRenderer(f *testing.F) {
	f.Add("registry.opentofu.org|hashicorp|aws|5.31.0|~> 5.0|h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	f.Add("REGISTRY.opentofu.org|HashiCorp|aws|1.0.0|>=1.0|zh:00")
	f.Add("h|n|t|1.0.0|${x}|h1:%{y}\nh|n|u|1.0.0|\"|\\")
	f.Add("registry.opentofu.org:443|a|b|1.0.0+x||")
	f.Fuzz(func(t *testing.T, spec string) {
		var locks []*ProviderLock
		for i, line := range strings.Split(spec, "\n") {
			if line == "" {
				continue
			}
			fields := append(strings.Split(line, "|"), "", "", "", "", "")
			typ := fields[2]
			if typ == "" {
				typ = fmt.Sprintf("p%d", i)
			}
			var hs []string
			for _, h := range fields[5:] {
				if h != "" {
					hs = append(hs, h)
				}
			}
			locks = append(locks, attackLock(fields[0], fields[1], typ, fields[3], fields[4], hs))
		}
		checkNoLie(t, locks)
	})
}

// Held: the read-back check of a lock that is not plain accepts what
// the writer canonicalizes (constraints as written by a person), and
// refuses a hand-made address or a hash the file cannot hold as it is.
func TestAttackSetProviderReadsBack(t *testing.T) {
	for _, c := range []struct {
		lock *ProviderLock
		ok   bool
	}{
		{attackLock("registry.opentofu.org", "hashicorp", "null", "1.0.0", ">=1.0,<2.0", nil), true},
		{attackLock("registry.opentofu.org", "hashicorp", "null", "1.0.0", "!= 1.0.0, != 1.0.0", []string{"x:y"}), true},
		{attackLock("A", "hashicorp", "null", "1.0.0", "", nil), false},
		{attackLock("registry.opentofu.org", "HashiCorp", "null", "1.0.0", "", nil), false},
		{attackLock("registry.opentofu.org", "hashicorp", "null", "1.0.0", "", []string{"x:\xab0"}), false},
	} {
		err := New().SetProvider(c.lock)
		if (err == nil) != c.ok {
			t.Errorf("SetProvider(%s %q %q) = %v, want ok %v", c.lock.Addr, c.lock.Constraints, c.lock.Hashes, err, c.ok)
		}
	}
}
