package address

import (
	"strings"
)

// Redact removes credentials from every URL in s: the user information of
// "scheme://user:password@host" (kept only when it is the plain user name
// "git" of an SSH address) and the value of any "sshkey" query argument.
// It is meant for messages and logs; the result is not a usable address.
func Redact(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/?# \t\r\n\"'")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			if s[:at] == "git" {
				b.WriteString("git@")
			} else {
				b.WriteString("REDACTED@")
			}
			s = s[at+1:]
		}
	}
	b.WriteString(s)
	return redactQueryArg(b.String(), "sshkey=")
}

func redactQueryArg(s, key string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, key)
		if i < 0 || (i > 0 && s[i-1] != '?' && s[i-1] != '&') {
			if i < 0 {
				break
			}
			b.WriteString(s[:i+len(key)])
			s = s[i+len(key):]
			continue
		}
		b.WriteString(s[:i+len(key)])
		s = s[i+len(key):]
		end := strings.IndexAny(s, "&# \t\r\n\"'")
		if end < 0 {
			end = len(s)
		}
		if end > 0 {
			b.WriteString("REDACTED")
		}
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

// stripCredentials removes credentials from every URL in s, for text that
// is written down to be kept, such as a lock file's source: an ssh URL
// keeps its user name (the "git" of git@host is part of the address) but
// loses any password; any other URL loses its whole user information,
// since over HTTP a user name alone is often a token.
func stripCredentials(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		scheme := s[:i]
		if j := strings.LastIndex(scheme, "::"); j >= 0 {
			scheme = scheme[j+2:]
		}
		if j := strings.LastIndexAny(scheme, "/?#& \t"); j >= 0 {
			scheme = scheme[j+1:]
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/?# \t\r\n\"'")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			if strings.EqualFold(scheme, "ssh") {
				user, _, _ := strings.Cut(s[:at], ":")
				b.WriteString(user + "@")
			}
			s = s[at+1:]
		}
	}
	b.WriteString(s)
	return b.String()
}
