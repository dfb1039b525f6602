package httpx

import (
	"net/url"
	"testing"
)

func TestTokenAllowed(t *testing.T) {
	for _, tc := range []struct {
		url            string
		strict, loopbk bool // without and with LoopbackHTTPTokens
	}{
		{"https://registry.example.test/v1/", true, true},
		{"HTTPS://registry.example.test/v1/", true, true},
		{"http://registry.example.test/v1/", false, false},
		{"http://localhost:8080/v1/", false, true},
		{"http://LOCALHOST/v1/", false, true},
		{"http://127.0.0.1:8080/v1/", false, true},
		{"http://127.1.2.3/v1/", false, true},
		{"http://[::1]:8080/v1/", false, true},
		{"http://10.0.0.1/v1/", false, false},
		{"http://localhost.example.test/v1/", false, false},
		{"ftp://registry.example.test/v1/", false, false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := TokenAllowed(u, false); got != tc.strict {
			t.Errorf("TokenAllowed(%s, false) = %v, want %v", tc.url, got, tc.strict)
		}
		if got := TokenAllowed(u, true); got != tc.loopbk {
			t.Errorf("TokenAllowed(%s, true) = %v, want %v", tc.url, got, tc.loopbk)
		}
	}
}
