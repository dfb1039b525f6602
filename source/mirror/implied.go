package mirror

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ImpliedDirsEnv is what [ImpliedDirs] needs to know about the machine.
// Every field has a default that reads the running program's environment;
// tests set them all.
type ImpliedDirsEnv struct {
	// GOOS selects the platform conventions. Default: runtime.GOOS.
	GOOS string
	// Home is the user's home directory. Default: none (the directories
	// under it are left out).
	Home string
	// Getenv reads an environment variable (XDG_DATA_HOME, XDG_DATA_DIRS,
	// APPDATA). Default: every variable is unset.
	Getenv func(string) string
	// WorkDir is the working directory that the relative
	// "terraform.d/plugins" is resolved against. Default: it stays relative.
	WorkDir string
}

// ImpliedDirs returns the local mirror directories OpenTofu searches when
// the CLI configuration has no provider_installation block, in priority
// order:
//
//   - "terraform.d/plugins" in the working directory;
//   - the "plugins" directory under the CLI configuration directory
//     (~/.terraform.d/plugins, or $XDG_DATA_HOME/opentofu/plugins when
//     XDG_DATA_HOME is set and ~/.terraform.d does not exist;
//     %APPDATA%\terraform.d\plugins on Windows);
//   - the platform's user data directories: on Linux and other Unix
//     systems $XDG_DATA_HOME/terraform/plugins (default
//     ~/.local/share/terraform/plugins) and DIR/terraform/plugins for each
//     DIR of $XDG_DATA_DIRS (default /usr/local/share and /usr/share); on
//     macOS ~/Library/Application Support/io.terraform/plugins and
//     /Library/Application Support/io.terraform/plugins; on Windows
//     %APPDATA%\HashiCorp\Terraform\plugins.
//
// Directories are returned whether or not they exist; OpenTofu skips the
// missing ones.
func ImpliedDirs(env ImpliedDirsEnv) []string {
	goos := env.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	join := filepath.Join
	if goos == "windows" && runtime.GOOS != "windows" {
		join = func(el ...string) string { return strings.Join(el, `\`) }
	}
	var dirs []string
	local := join("terraform.d", "plugins")
	if env.WorkDir != "" {
		local = join(env.WorkDir, local)
	}
	dirs = append(dirs, local)

	switch goos {
	case "windows":
		if appData := getenv("APPDATA"); appData != "" {
			dirs = append(dirs, join(appData, "terraform.d", "plugins"))
			dirs = append(dirs, join(appData, "HashiCorp", "Terraform", "plugins"))
		}
	case "darwin", "ios":
		if env.Home != "" {
			dirs = append(dirs, join(env.Home, ".terraform.d", "plugins"))
			dirs = append(dirs, join(env.Home, "Library", "Application Support", "io.terraform", "plugins"))
		}
		dirs = append(dirs, join("/Library", "Application Support", "io.terraform", "plugins"))
	default:
		if env.Home != "" {
			cliDir := join(env.Home, ".terraform.d")
			if x := getenv("XDG_DATA_HOME"); x != "" && !dirExists(cliDir) {
				cliDir = join(x, "opentofu")
			}
			dirs = append(dirs, join(cliDir, "plugins"))
		}
		dataHome := getenv("XDG_DATA_HOME")
		if dataHome == "" && env.Home != "" {
			dataHome = join(env.Home, ".local", "share")
		}
		if dataHome != "" {
			dirs = append(dirs, join(dataHome, "terraform", "plugins"))
		}
		dataDirs := getenv("XDG_DATA_DIRS")
		if dataDirs == "" {
			dataDirs = "/usr/local/share/:/usr/share/"
		}
		for _, d := range strings.Split(dataDirs, ":") {
			if d != "" {
				dirs = append(dirs, join(d, "terraform", "plugins"))
			}
		}
	}
	return dirs
}

// CurrentImpliedDirsEnv returns the [ImpliedDirsEnv] of the running
// program: its GOOS, the user's home directory, its environment and its
// working directory.
func CurrentImpliedDirsEnv() ImpliedDirsEnv {
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	return ImpliedDirsEnv{GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv, WorkDir: wd}
}

func dirExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}
