package git_test

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
	"github.com/tflock/tflock/source/git"
)

// sshScript stands in for the ssh client only: it records the identity
// file it is given ("-i"), that file's permission bits and content, and
// then runs the remote command ("git-upload-pack '/path'") locally, so git
// still speaks its own ssh transport protocol over the pipe.
const sshScript = `#!/bin/sh
key=""
while [ $# -gt 1 ]; do
	case "$1" in
	-i) key="$2"; shift 2 ;;
	-o|-p) shift 2 ;;
	*) shift ;;
	esac
done
mode=$(stat -c %a "$key" 2>/dev/null || stat -f %Lp "$key")
{ echo "key=$key"; echo "mode=$mode"; echo "content=$(cat "$key")"; } >> "$TFLOCK_TEST_SSH_LOG"
exec sh -c "$1"
`

// TestSSHKey checks the "sshkey" argument end to end: the key is decoded
// into a 0600 temporary file, passed to ssh with "-i" through
// GIT_SSH_COMMAND (after any GIT_SSH_COMMAND the caller set, as go-getter
// does), used for ls-remote and fetch, and removed afterwards.
func TestSSHKey(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in ssh client is a POSIX shell script")
	}
	root := t.TempDir()
	f := newFixture(t, filepath.Join(root, "repo"))

	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(sshScript), 0o755); err != nil {
		t.Fatal(err)
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(root, "ssh.log")
	tmp := filepath.Join(root, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", strings.TrimSpace(string(execPath))+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("GIT_SSH_COMMAND", filepath.Join(bin, "ssh"))
	t.Setenv("TFLOCK_TEST_SSH_LOG", logFile)
	t.Setenv("TMPDIR", tmp)

	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\ntest key material\n-----END OPENSSH PRIVATE KEY-----"
	src := "git::ssh://git@example.test" + filepath.ToSlash(f.repo.dir) + "?sshkey=" + base64.StdEncoding.EncodeToString([]byte(key))
	ctx := context.Background()
	for _, cache := range []string{"", t.TempDir()} {
		os.Remove(logFile)
		s := git.NewSource(git.Options{CacheDir: cache})
		pkg := source.ModulePackage{Source: src}
		avail, err := s.Versions(ctx, pkg)
		if err != nil {
			t.Fatalf("cache %q: Versions: %v", cache, err)
		}
		if len(avail) != 3 {
			t.Errorf("cache %q: got %d versions, want 3: %v", cache, len(avail), avail)
		}
		pkg.Version = versions.MustParse("1.1.0")
		got, err := s.Fetch(ctx, pkg, filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatalf("cache %q: Fetch: %v", cache, err)
		}
		if got.Pin != f.c2 {
			t.Errorf("cache %q: Pin = %s, want %s", cache, got.Pin, f.c2)
		}
		if strings.Contains(got.Location, "sshkey") {
			t.Errorf("cache %q: Location shows the key: %s", cache, got.Location)
		}

		log, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatalf("cache %q: ssh was never run: %v", cache, err)
		}
		calls := strings.Count(string(log), "key=")
		if calls < 2 {
			t.Errorf("cache %q: ssh ran %d times, want at least 2 (ls-remote and fetch):\n%s", cache, calls, log)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
			name, value, _ := strings.Cut(line, "=")
			switch name {
			case "key":
				if !strings.HasPrefix(value, tmp+string(os.PathSeparator)) {
					t.Errorf("cache %q: key file %q is not in the temporary directory", cache, value)
				}
			case "mode":
				if value != "600" {
					t.Errorf("cache %q: key file mode %s, want 600", cache, value)
				}
			}
		}
		if !strings.Contains(string(log), "content="+strings.SplitN(key, "\n", 2)[0]) || !strings.Contains(string(log), "test key material") {
			t.Errorf("cache %q: ssh did not get the decoded key:\n%s", cache, log)
		}
		left, _ := filepath.Glob(filepath.Join(tmp, "tflock-sshkey-*"))
		if len(left) > 0 {
			t.Errorf("cache %q: key files left behind: %v", cache, left)
		}
	}
}
