package address

import "github.com/tflock/tflock/source/internal/display"

// Redact removes credentials from every URL in s: the user information of
// "scheme://user:password@host" (kept only when it is the plain user name
// "git" of an SSH address) and the value of any "sshkey" query argument,
// each replaced by "REDACTED". It is meant for messages and logs; the
// result is not a usable address. It is the redaction every event, error
// and warning of tflock goes through.
func Redact(s string) string { return display.Redact(s) }

// StripCredentials removes credentials from every URL in s, for text that
// is written down to be kept, such as a lock file's source or a cache key:
// an ssh URL keeps its user name (the "git" of git@host is part of the
// address) but loses any password; any other URL loses its whole user
// information, since over HTTP a user name alone is often a token; an
// "sshkey" argument is removed. Two addresses that differ only by their
// credentials give the same result.
func StripCredentials(s string) string { return display.StripCredentials(s) }
