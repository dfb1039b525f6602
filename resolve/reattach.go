package resolve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	"github.com/tflock/tflock/internal/provaddr"
)

// ReattachError reports an invalid TF_REATTACH_PROVIDERS value.
type ReattachError struct {
	// Err says what is wrong: the JSON decoder's error, or the fault of a key it names.
	Err error
}

// Error implements error.
func (e *ReattachError) Error() string { return "invalid TF_REATTACH_PROVIDERS: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ReattachError) Unwrap() error { return e.Err }

// ParseReattach parses the value of TF_REATTACH_PROVIDERS, a JSON object
// whose keys are provider addresses and whose values describe how to reach
// an already-running provider, and returns the addresses, sorted. Keys
// without a host name are on defaultHost (default [DefaultRegistryHost]).
// Each value must be a JSON object; its contents are not examined.
func ParseReattach(s, defaultHost string) ([]tfaddr.Provider, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, &ReattachError{Err: err}
	}
	var out []tfaddr.Provider
	for k, v := range m {
		p, err := provaddr.ParseNotLegacy(k, defaultHost)
		if err != nil {
			return nil, &ReattachError{Err: fmt.Errorf("key %q: %w", k, err)}
		}
		if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
			return nil, &ReattachError{Err: fmt.Errorf("key %q: the value must be an object", k)}
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b tfaddr.Provider) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}
