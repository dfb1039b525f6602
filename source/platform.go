package source

import (
	"fmt"
	"runtime"
	"strings"
)

// Platform is an operating system and CPU architecture pair, spelled as
// OpenTofu spells it: "linux_amd64". The zero value means "no platform"
// (modules, or a provider lookup that does not care).
type Platform struct {
	// OS is the operating system, as Go spells it: "linux", "darwin", "windows".
	OS string
	// Arch is the CPU architecture, as Go spells it: "amd64", "arm64".
	Arch string
}

// CurrentPlatform is the platform this program runs on.
var CurrentPlatform = Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}

// ParsePlatform parses "os_arch". Both parts must be non-empty, lower-case
// letters and digits only.
func ParsePlatform(s string) (Platform, error) {
	os, arch, ok := strings.Cut(s, "_")
	if !ok || !validPlatformPart(os) || !validPlatformPart(arch) {
		return Platform{}, fmt.Errorf("invalid platform %q: must be two lower-case words joined by an underscore, such as \"linux_amd64\"", s)
	}
	return Platform{OS: os, Arch: arch}, nil
}

func validPlatformPart(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// String returns "os_arch", or "" for the zero value.
func (p Platform) String() string {
	if p.IsZero() {
		return ""
	}
	return p.OS + "_" + p.Arch
}

// IsZero reports whether p is the zero Platform.
func (p Platform) IsZero() bool { return p == Platform{} }

// LessThan orders platforms by OS, then architecture.
func (p Platform) LessThan(o Platform) bool {
	if p.OS != o.OS {
		return p.OS < o.OS
	}
	return p.Arch < o.Arch
}

// MarshalText implements encoding.TextMarshaler.
func (p Platform) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Platform) UnmarshalText(b []byte) error {
	v, err := ParsePlatform(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
