package git

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tflock/tflock/internal/flock"
	"github.com/tflock/tflock/source/address"
	"github.com/tflock/tflock/source/internal/display"
)

// gitEnvDropped lists inherited variables that would point git at another
// repository or configuration.
var gitEnvDropped = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
	"GIT_CEILING_DIRECTORIES", "GIT_PREFIX", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
	"GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_COUNT",
	"GIT_CONFIG_PARAMETERS", "GIT_TERMINAL_PROMPT", "GIT_PROTOCOL_FROM_USER",
	"LC_ALL", "LANGUAGE",
}

// runner runs git commands for one operation.
type runner struct {
	git        string
	env        []string
	keyFile    string   // temporary sshkey file to remove, or ""
	keyHold    *os.File // the key file, open and locked while in use
	secrets    []string // the sshkey argument, never to be shown
	allowFile  bool     // allow the file transport for submodules
	configArgs []string
}

// newRunner prepares the environment. sshKey is the base64 "sshkey"
// argument, or "".
func (s *Source) newRunner(sshKey string, allowFile bool) (*runner, error) {
	git, err := s.gitPath()
	if err != nil {
		return nil, err
	}
	env := make([]string, 0, len(os.Environ())+6)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
		for _, d := range gitEnvDropped {
			drop = drop || name == d
		}
		if !drop {
			env = append(env, kv)
		}
	}
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(s.opts.Env, func(o string) bool { return strings.HasPrefix(o, name+"=") })
	})
	env = append(env, s.opts.Env...)
	env = append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GCM_INTERACTIVE=never")
	if !s.opts.UserConfig {
		env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	}
	r := &runner{git: git, env: env, allowFile: allowFile}
	if sshKey != "" {
		r.secrets = []string{sshKey}
		key, err := base64.StdEncoding.DecodeString(sshKey)
		if err != nil {
			return nil, errors.New(`invalid "sshkey" argument: must be a base64-encoded private key`)
		}
		sweepKeyFiles()
		f, err := os.CreateTemp("", keyFilePattern)
		if err != nil {
			return nil, err
		}
		// Locked while in use: a key file whose lock is free was left by
		// a process that was killed, and the next run removes it.
		_, _ = flock.LockOpenFile(f)
		r.keyFile, r.keyHold = f.Name(), f
		if err := f.Chmod(0o600); err != nil {
			r.close()
			return nil, err
		}
		if _, err := f.Write(key); err != nil {
			r.close()
			return nil, err
		}
		if err := f.Sync(); err != nil {
			r.close()
			return nil, err
		}
		ssh := "ssh"
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "GIT_SSH_COMMAND="); ok && v != "" {
				ssh = v
			}
		}
		r.env = append(r.env, "GIT_SSH_COMMAND="+ssh+" -i "+shellQuote(r.keyFile)+" -o IdentitiesOnly=yes")
	}
	for _, c := range s.opts.Config {
		r.configArgs = append(r.configArgs, "-c", c)
	}
	if allowFile {
		r.configArgs = append(r.configArgs, "-c", "protocol.file.allow=always")
	}
	return r, nil
}

// close removes the temporary key file.
func (r *runner) close() {
	if r.keyFile != "" {
		os.Remove(r.keyFile)
		r.keyFile = ""
	}
	if r.keyHold != nil {
		r.keyHold.Close()
		r.keyHold = nil
	}
}

// keyFilePattern names the temporary files that hold an "sshkey" argument.
const keyFilePattern = "tflock-sshkey-*"

// keyFileGrace is how old a key file must be before sweepKeyFiles may
// remove it: the moment between creating it and locking it.
const keyFileGrace = 5 * time.Second

// sweepKeyFiles removes the key files that killed runs left in the
// temporary directory: a private key must not outlive its run. A key file
// in use is locked by its run (see newRunner).
func sweepKeyFiles() {
	names, _ := filepath.Glob(filepath.Join(os.TempDir(), keyFilePattern))
	for _, name := range names {
		fi, err := os.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < keyFileGrace {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		free, err := flock.LockOpenFile(f)
		f.Close()
		if err == nil && free {
			os.Remove(name)
		}
	}
}

// run runs git with args in dir ("" for the current directory) and returns
// its standard output.
func (r *runner) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return r.runEnv(ctx, dir, nil, args...)
}

// runEnv is run with the variables env ("NAME=value") added to the
// runner's environment.
func (r *runner) runEnv(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	full := append(append([]string{}, r.configArgs...), args...)
	cmd := exec.CommandContext(ctx, r.git, full...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clip(r.env), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		var execErr *exec.Error
		if errors.As(err, &execErr) {
			err = fmt.Errorf("%w: %v", ErrGitNotFound, err)
		}
		// Git quotes URLs in its messages, sometimes in its own spelling:
		// the credentials of the arguments and the private key are
		// scrubbed literally as well as by their shape.
		secrets := slices.Clone(r.secrets)
		red := make([]string, len(args))
		for i, a := range args {
			secrets = append(secrets, display.URLSecrets(a)...)
			red[i] = address.Redact(a)
		}
		return stdout.Bytes(), &CommandError{Args: red, Stderr: display.Scrub(stderr.String(), secrets), Err: err}
	}
	return stdout.Bytes(), nil
}

// shellQuote quotes s for the POSIX shell that git runs GIT_SSH_COMMAND with.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
