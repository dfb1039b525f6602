package address

import "testing"

func TestLockSourceLeavesOutCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"git::https://user:secret@example.com/org/net.git?ref=v1.0.0": "git::https://example.com/org/net.git",
		"git::https://ghp_token@example.com/org/net.git//modules/a":   "git::https://example.com/org/net.git//modules/a",
		"git::ssh://git:pw@example.com/org/net.git":                   "git::ssh://git@example.com/org/net.git",
		"git::ssh://git@example.com/org/net.git":                      "git::ssh://git@example.com/org/net.git",
		"https://tok@example.com/modules/net.zip":                     "https://example.com/modules/net.zip",
		"https://example.com/modules/net.zip":                         "https://example.com/modules/net.zip",
	} {
		src, err := ParseModuleSource(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := src.LockSource(); got != want {
			t.Errorf("LockSource(%s) = %q, want %q", in, got, want)
		}
	}
}
