package mirror_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/source/mirror"
)

func TestImpliedDirs(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	tests := map[string]struct {
		env  mirror.ImpliedDirsEnv
		want []string
	}{
		"linux defaults": {
			env: mirror.ImpliedDirsEnv{GOOS: "linux", Home: "/home/u", WorkDir: "/work/cfg", Getenv: env(nil)},
			want: []string{
				"/work/cfg/terraform.d/plugins",
				"/home/u/.terraform.d/plugins",
				"/home/u/.local/share/terraform/plugins",
				"/usr/local/share/terraform/plugins",
				"/usr/share/terraform/plugins",
			},
		},
		"linux XDG": {
			// /dev/null/u cannot exist, so ~/.terraform.d does not either.
			env: mirror.ImpliedDirsEnv{GOOS: "linux", Home: "/dev/null/u", Getenv: env(map[string]string{"XDG_DATA_HOME": "/data", "XDG_DATA_DIRS": "/a:/b"})},
			want: []string{
				"terraform.d/plugins",
				"/data/opentofu/plugins",
				"/data/terraform/plugins",
				"/a/terraform/plugins",
				"/b/terraform/plugins",
			},
		},
		"darwin": {
			env: mirror.ImpliedDirsEnv{GOOS: "darwin", Home: "/Users/u"},
			want: []string{
				"terraform.d/plugins",
				"/Users/u/.terraform.d/plugins",
				"/Users/u/Library/Application Support/io.terraform/plugins",
				"/Library/Application Support/io.terraform/plugins",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := mirror.ImpliedDirs(tc.env)
			for i := range got {
				got[i] = filepath.ToSlash(got[i])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	win := mirror.ImpliedDirs(mirror.ImpliedDirsEnv{GOOS: "windows", Getenv: env(map[string]string{"APPDATA": `C:\Users\u\AppData\Roaming`})})
	if len(win) != 3 || !strings.HasSuffix(win[2], `HashiCorp\Terraform\plugins`) {
		t.Errorf("windows: %q", win)
	}
}

func TestDevOverrides(t *testing.T) {
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	d := mirror.DevOverrides{null: "/src/null"}
	if dir, ok := d.Dir(null); !ok || dir != "/src/null" {
		t.Errorf("Dir = %q, %v", dir, ok)
	}
	if d.Overrides(tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/aws")) {
		t.Error("aws reported as overridden")
	}
	w := d.Warning()
	if !strings.Contains(w, "hashicorp/null in /src/null") || !strings.Contains(w, "not recorded") {
		t.Errorf("warning:\n%s", w)
	}
	if (mirror.DevOverrides{}).Warning() != "" {
		t.Error("warning without overrides")
	}
}

func TestCheckLegacyPlugins(t *testing.T) {
	null := tfaddr.MustParseProviderSource("registry.opentofu.org/hashicorp/null")
	installErr := errors.New("provider registry.opentofu.org/hashicorp/null was not found")

	// Terraform 0.12 layout.
	work := t.TempDir()
	old := filepath.Join(work, ".terraform", "plugins", "linux_amd64")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "terraform-provider-null_v2.1.2_x4"), []byte("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := mirror.CheckLegacyPlugins(work, null, installErr)
	var le *mirror.LegacyPluginError
	if !errors.As(err, &le) || !errors.Is(err, installErr) {
		t.Fatalf("got %v", err)
	}
	if want := filepath.Join("terraform.d", "plugins", "registry.opentofu.org", "hashicorp", "null", "2.1.2", "linux_amd64"); le.MoveTo != want {
		t.Errorf("MoveTo = %q, want %q", le.MoveTo, want)
	}
	if !strings.Contains(err.Error(), le.MoveTo) || !strings.Contains(err.Error(), "legacy plugins directory") {
		t.Errorf("message: %v", err)
	}

	// Terraform 0.13 layout.
	work = t.TempDir()
	newer := filepath.Join(work, ".terraform", "plugins", "registry.opentofu.org", "hashicorp", "null", "3.0.0", "darwin_arm64")
	if err := os.MkdirAll(newer, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mirror.CheckLegacyPlugins(work, null, installErr); !errors.As(err, &le) || !strings.HasSuffix(le.MoveTo, filepath.Join("3.0.0", "darwin_arm64")) {
		t.Errorf("got %v", err)
	}

	// Not there: the error is unchanged.
	if err := mirror.CheckLegacyPlugins(t.TempDir(), null, installErr); err != installErr {
		t.Errorf("got %v, want the install error itself", err)
	}
}
