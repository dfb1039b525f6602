package install_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tflock/tflock/lockfile"
	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/install"
	"github.com/tflock/tflock/resolve/install/installtest"
)

// terragrunt are the words of a wrapper that runs tflock's Init as its
// own init, with its own read-only flag.
var terragrunt = install.Words{
	Program:       "Terragrunt",
	Init:          "terragrunt init",
	Upgrade:       "terragrunt init -upgrade",
	ReadOnly:      `the "--lockfile-readonly" flag`,
	ProvidersLock: "terragrunt providers lock",
	Locker:        "terragrunt init",
}

// unlockRandom writes rootConfig and removes the random provider from the
// lock file in dir: a read-only run refuses to select it.
func unlockRandom(t *testing.T, dir string) {
	t.Helper()
	writeFiles(t, dir, map[string]string{"main.tf": rootConfig})
	path := filepath.Join(dir, install.LockFileName)
	lf, err := lockfile.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lf.RemoveProvider(randAddr)
	if err := lockfile.WriteFile(path, lf); err != nil {
		t.Fatal(err)
	}
}

// speaksTerragrunt fails the test unless msg names terragrunt and no other
// program or another program's flag.
func speaksTerragrunt(t *testing.T, what, msg string) {
	t.Helper()
	if !strings.Contains(msg, "terragrunt") && !strings.Contains(msg, "Terragrunt") {
		t.Errorf("%s does not name terragrunt:\n%s", what, msg)
	}
	for _, foreign := range []string{"tofu init", "OpenTofu", "terraform init", "Terraform has", "tflock", "-lockfile=readonly"} {
		if strings.Contains(msg, foreign) {
			t.Errorf("%s names %q:\n%s", what, foreign, msg)
		}
	}
}

// TestWordsWrapper: a wrapper that names itself and its commands in
// Options.Words sees its words in every remedy: the lock notes, Check's
// problems, read-only refusals and warnings, checksum errors and the
// solver's locked-version mismatch; and each problem carries its remedy
// as data.
func TestWordsWrapper(t *testing.T) {
	ctx := context.Background()
	dir := newConfig(t)
	lockPath := filepath.Join(dir, install.LockFileName)
	w := terragrunt
	c := openCache(t)
	opts := install.Options{Dir: dir, Source: staticFixtures(), Cache: c, Words: &w}

	res, err := install.Init(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	note, err := install.WriteLock(lockPath, res)
	if err != nil {
		t.Fatal(err)
	}
	speaksTerragrunt(t, "the created note", note)
	// A static source vouches for no checksum: the incomplete lock warning.
	if len(res.Warnings) == 0 {
		t.Error("no incomplete lock warning")
	}
	for _, warning := range res.Warnings {
		speaksTerragrunt(t, "a warning", warning)
		if strings.HasPrefix(warning, install.IncompleteLockWarningSummary) && !strings.Contains(warning, "  terragrunt providers lock -platform=") {
			t.Errorf("incomplete lock warning:\n%s", warning)
		}
	}
	if !strings.HasPrefix(note, "Terragrunt has created a lock file") || !strings.Contains(note, `you run "terragrunt init" in the future`) {
		t.Errorf("created note:\n%s", note)
	}

	// Check: constraints changed, a provider not selected.
	cfg := strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "~> 4.0"`, 1)
	cfg = strings.Replace(cfg, `version = "~> 1.0"`, `version = "~> 2.0"`, 1)
	cfg = strings.Replace(cfg, "  }\n}\n", "    tls = { source = \""+host+"/hashicorp/tls\" }\n  }\n}\n", 1)
	writeFiles(t, dir, map[string]string{"main.tf": cfg})
	cres, err := install.Check(ctx, install.CheckOptions{Dir: dir, Words: &w})
	var ie *install.InconsistentLockError
	if !errors.As(err, &ie) {
		t.Fatalf("Check = %v, want an *InconsistentLockError", err)
	}
	speaksTerragrunt(t, "Check's error", ie.Error())
	if !strings.HasSuffix(ie.Error(), "run:\n  terragrunt init -upgrade") || ie.Remedy.Kind != install.RemedyUpgrade {
		t.Errorf("Check's error (remedy %+v):\n%s", ie.Remedy, ie.Error())
	}
	tls := mustAddr(t, host+"/hashicorp/tls").Addr
	want := map[string]install.Remedy{
		"vpc":            {Kind: install.RemedyUpgrade, Module: "vpc", Modules: true},
		awsAddr.String(): {Kind: install.RemedyUpgrade, Provider: awsAddr},
		tls.String():     {Kind: install.RemedyInit, Provider: tls},
	}
	for _, p := range cres.Problems {
		key := p.Call
		if key == "" {
			key = p.Remedy.Provider.String()
		}
		if p.Remedy != want[key] {
			t.Errorf("problem %q: remedy %+v, want %+v", p.Message, p.Remedy, want[key])
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("no problem for %v", want)
	}

	// Read-only: a provider the lock file lacks is refused, a changed constraint too.
	unlockRandom(t, dir)
	ro := opts
	ro.ReadOnly = true
	_, err = install.Init(ctx, ro)
	var lc *install.LockChangedError
	if !errors.As(err, &lc) {
		t.Fatalf("read-only Init with a provider not locked = %v, want a *LockChangedError", err)
	}
	speaksTerragrunt(t, "the read-only refusal", err.Error())
	if !strings.Contains(err.Error(), `To use and record these requirements, run "terragrunt init" without the "--lockfile-readonly" flag.`) || lc.Remedy.Kind != install.RemedyWritable {
		t.Errorf("read-only refusal (remedy %+v):\n%s", lc.Remedy, err)
	}
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "~> 4.0"`, 1)})
	_, err = install.Init(ctx, opts)
	var lm *resolve.LockedMismatchError
	if !errors.As(err, &lm) {
		t.Fatalf("Init with a constraint the locked version fails = %v, want a *resolve.LockedMismatchError", err)
	}
	speaksTerragrunt(t, "the locked mismatch", err.Error())

	// The module calls of a lock file that has not adopted module
	// locking: read-only and Check warn, each with its remedy.
	writeFiles(t, dir, map[string]string{"main.tf": rootConfig})
	if err := os.WriteFile(lockPath, providerOnly(res.Lock).Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rres, err := install.Init(ctx, ro)
	if err != nil {
		t.Fatal(err)
	}
	if len(rres.Warnings) != 1 || !strings.HasPrefix(rres.Warnings[0], install.ModulesNotLockedWarning) || !strings.HasSuffix(rres.Warnings[0], `To lock them, run "terragrunt init" without the "--lockfile-readonly" flag.`) {
		t.Errorf("read-only warnings: %q", rres.Warnings)
	}
	cres, err = install.Check(ctx, install.CheckOptions{Dir: dir, Words: &w})
	if err != nil {
		t.Fatal(err)
	}
	if len(cres.Warnings) != 1 || !strings.HasSuffix(cres.Warnings[0], `To lock them, run "terragrunt init".`) {
		t.Errorf("Check warnings: %q", cres.Warnings)
	}

	// A module not installed.
	if err := os.WriteFile(lockPath, res.Lock.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".terraform", "modules", "vpc")); err != nil {
		t.Fatal(err)
	}
	_, err = install.Check(ctx, install.CheckOptions{Dir: dir, Words: &w})
	var mn *install.ModuleNotInstalledError
	if !errors.As(err, &mn) || !strings.Contains(mn.Error(), `Run "terragrunt init" to install all modules`) {
		t.Errorf("Check without the module installed = %v, want a *ModuleNotInstalledError in terragrunt's words", err)
	} else {
		speaksTerragrunt(t, "module not installed", mn.Error())
	}

	// An upgrade: the changed note.
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "5.0.0"`, 1)})
	up := opts
	up.Resolve.Upgrade = true
	res, err = install.Init(ctx, up)
	if err != nil {
		t.Fatal(err)
	}
	note, err = install.WriteLock(lockPath, res)
	if err != nil {
		t.Fatal(err)
	}
	speaksTerragrunt(t, "the changed note", note)
	if !strings.Contains(note, "Terragrunt has made some changes to the provider dependency selections") {
		t.Errorf("changed note:\n%s", note)
	}
}

// TestWordsChecksumError: a package that no longer matches the lock file
// is refused with the wrapper's init in the remedy, and the remedy as
// data.
func TestWordsChecksumError(t *testing.T) {
	orig, err := installtest.Start(context.Background(), installtest.Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(orig.Close)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": registryOnlyConfig})
	w := terragrunt
	initAndWrite(t, install.Options{Dir: dir, Source: orig.Source, Cache: openCache(t), Words: &w})
	fx := republished()
	again, err := installtest.Start(context.Background(), installtest.Options{NoGit: true, Fixtures: &fx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Close)
	freshMachine(t, dir)
	_, err = install.Init(context.Background(), install.Options{Dir: dir, Source: again.Source, Cache: openCache(t), Words: &w})
	var ce *install.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("Init against the republished registry: %v, want a *install.ChecksumError", err)
	}
	speaksTerragrunt(t, "the checksum error", err.Error())
	if ce.Remedy.Kind != install.RemedyRelock || (ce.Remedy.Module == "") == ce.Remedy.Provider.IsZero() || !strings.Contains(err.Error(), `run "terragrunt init" again`) {
		t.Errorf("checksum error (remedy %+v):\n%s", ce.Remedy, err)
	}
}

// TestWordsFlavor: without Words, the remedies are the flavour's:
// OpenTofu's text word for word, Terraform's with "terraform".
func TestWordsFlavor(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		flavor          install.Flavor
		upgrade, record string
	}{
		{install.FlavorOpenTofu, "run:\n  tofu init -upgrade", `To use and record these requirements, run "tofu init" without the "-lockfile=readonly" flag.`},
		{install.FlavorTerraform, "run:\n  terraform init -upgrade", `To use and record these requirements, run "terraform init" without the "-lockfile=readonly" flag.`},
	} {
		program := map[install.Flavor]string{install.FlavorOpenTofu: "OpenTofu", install.FlavorTerraform: "Terraform"}[tc.flavor]
		lock := program + " was forced to calculate lock file checksums locally"
		dir := newConfig(t)
		opts := install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t), Flavor: tc.flavor}
		res := initAndWrite(t, opts)
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, lock) }) {
			t.Errorf("%s: warnings %q, want the incomplete lock warning with %q", tc.flavor, res.Warnings, lock)
		}
		writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `version = "~> 5.0"`, `version = "~> 4.0"`, 1)})
		_, err := install.Check(ctx, install.CheckOptions{Dir: dir, Flavor: tc.flavor})
		if err == nil || !strings.HasSuffix(err.Error(), tc.upgrade) {
			t.Errorf("%s: Check = %v, want it to end with %q", tc.flavor, err, tc.upgrade)
		}
		_, err = install.Init(ctx, opts)
		if err == nil || !strings.Contains(err.Error(), "must use "+strings.TrimPrefix(tc.upgrade, "run:\n  ")+" to allow") {
			t.Errorf("%s: Init = %v, want the upgrade command %q", tc.flavor, err, tc.upgrade)
		}
		unlockRandom(t, dir)
		ro := opts
		ro.ReadOnly = true
		_, err = install.Init(ctx, ro)
		if err == nil || !strings.HasPrefix(err.Error(), "Provider dependency changes detected: ") || !strings.Contains(err.Error(), tc.record) {
			t.Errorf("%s: read-only Init = %v, want %q", tc.flavor, err, tc.record)
		}
	}
}

// TestLockChangedModuleOnly: a read-only run refusing a module call's
// change alone announces module changes, not provider changes, and names
// the program that locks modules.
func TestLockChangedModuleOnly(t *testing.T) {
	ctx := context.Background()
	dir := newConfig(t)
	opts := install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t)}
	initAndWrite(t, opts)
	writeFiles(t, dir, map[string]string{"main.tf": strings.Replace(rootConfig, `version = "~> 1.0"`, `version = "1.0.0"`, 1)})
	opts.ReadOnly = true
	_, err := install.Init(ctx, opts)
	var lc *install.LockChangedError
	if !errors.As(err, &lc) {
		t.Fatalf("read-only Init with a module constraint changed = %v, want a *LockChangedError", err)
	}
	if !strings.HasPrefix(err.Error(), "Module dependency changes detected: ") || !lc.Remedy.Modules || !strings.Contains(err.Error(), `run "tflock" without the "-lockfile=readonly" flag`) {
		t.Errorf("module-only refusal (remedy %+v):\n%s", lc.Remedy, err)
	}
}

// TestWordsRender: a Render function replaces every remedy's sentence and
// receives the remedy as data.
func TestWordsRender(t *testing.T) {
	ctx := context.Background()
	dir := newConfig(t)
	var seen []install.Remedy
	w := install.WordsFor(install.FlavorOpenTofu)
	w.Render = func(r install.Remedy) string {
		seen = append(seen, r)
		return "ask the platform team (" + r.Kind.String() + ")"
	}
	opts := install.Options{Dir: dir, Source: staticFixtures(), Cache: openCache(t), Words: &w}
	initAndWrite(t, opts)
	unlockRandom(t, dir)
	opts.ReadOnly = true
	_, err := install.Init(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), "To use and record these requirements, ask the platform team (run writable).") || strings.Contains(err.Error(), "tofu init") {
		t.Errorf("read-only Init = %v, want the rendered remedy", err)
	}
	_, err = install.Check(ctx, install.CheckOptions{Dir: dir, Words: &w})
	if err == nil || !strings.HasSuffix(err.Error(), "ask the platform team (upgrade).") {
		t.Errorf("Check = %v, want the rendered remedy", err)
	}
	if len(seen) == 0 {
		t.Error("Render was not called")
	}
}
