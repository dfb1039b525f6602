package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The providers of DIR/terraform.tfstate are locked though the
// configuration no longer names them.
func TestStateFileProviders(t *testing.T) {
	mirrorDir, h1s := packedMirror(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), "# the resources moved away\n")
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	args := providersLockArgs("-cache-dir", t.TempDir(), "-fs-mirror", mirrorDir, dir)

	// No state: nothing to lock.
	out, code := runLock(t, args...)
	if code != 0 || !strings.Contains(out, "Nothing to lock") {
		t.Fatalf("without state: exit %d\n%s", code, out)
	}

	state := `{"version": 4, "terraform_version": "1.12.6", "serial": 2, "lineage": "l", "outputs": {},
  "resources": [{"mode": "managed", "type": "tool_thing", "name": "a", "provider": "provider[\"example.test/acme/tool\"]", "instances": []}]}`
	writeFile(t, filepath.Join(dir, "terraform.tfstate"), state)
	out, code = runLock(t, args...)
	if code != 0 {
		t.Fatalf("with state: exit %d\n%s", code, out)
	}
	checkToolLock(t, dir, h1s, out)

	// A broken state is an error naming the file; the lock file stays.
	before, _ := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	writeFile(t, filepath.Join(dir, "terraform.tfstate"), `{"version": 3}`)
	out, code = runLock(t, args...)
	if code != 1 || !strings.Contains(out, filepath.Join(dir, "terraform.tfstate")+": state format version 3 is not supported") {
		t.Errorf("broken state: exit %d\n%s", code, out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl")); string(after) != string(before) {
		t.Error("a failed run changed the lock file")
	}
}

// A provider named in TF_REATTACH_PROVIDERS is neither installed nor
// locked.
func TestReattachedProvider(t *testing.T) {
	mirrorDir, h1s := packedMirror(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), toolConfig)
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(dir, "none.tfrc"))
	args := providersLockArgs("-cache-dir", t.TempDir(), "-fs-mirror", mirrorDir, dir)

	t.Setenv("TF_REATTACH_PROVIDERS", `{"example.test/acme/tool": {"Protocol": "grpc", "ProtocolVersion": 6, "Pid": 7, "Test": true, "Addr": {"Network": "unix", "String": "/tmp/plugin7"}}}`)
	out, code := runLock(t, args...)
	if code != 0 || !strings.Contains(out, "Nothing to lock") || !strings.Contains(out, "- Selected example.test/acme/tool (unmanaged)\n") {
		t.Fatalf("reattached: exit %d\n%s", code, out)
	}

	t.Setenv("TF_REATTACH_PROVIDERS", "")
	out, code = runLock(t, args...)
	if code != 0 {
		t.Fatalf("not reattached: exit %d\n%s", code, out)
	}
	checkToolLock(t, dir, h1s, out)

	t.Setenv("TF_REATTACH_PROVIDERS", `["example.test/acme/tool"]`)
	out, code = runLock(t, args...)
	if code != 1 || !strings.Contains(out, "Error: invalid TF_REATTACH_PROVIDERS: ") {
		t.Errorf("invalid value: exit %d\n%s", code, out)
	}
}
