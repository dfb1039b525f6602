package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/resolve"
)

// StateError reports a state file that cannot be read for its providers.
type StateError struct {
	// Filename is the state file's path, as given.
	Filename string
	// Err says why the file cannot be read: an I/O error or what is malformed.
	Err error
}

// Error implements error.
func (e *StateError) Error() string {
	if e.Filename == "" {
		return "state: " + e.Err.Error()
	}
	return e.Filename + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *StateError) Unwrap() error { return e.Err }

// ReadStateFile reads a state file (format version 4, as OpenTofu and
// Terraform 0.12+ write it) and returns one requirement, without a
// constraint, for each provider its resources use. See [StateRequirements].
func ReadStateFile(path string) ([]resolve.Requirement, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &StateError{Filename: path, Err: err}
	}
	return StateRequirements(src, path)
}

// StateRequirements returns one requirement per provider that the
// resources of the state src use (resources[].provider, such as
// `provider["registry.opentofu.org/hashicorp/aws"]`), without a constraint
// and with a state origin. As in OpenTofu, such a provider stays required,
// and locked, after its last mention leaves the configuration. filename is
// used in origins and errors. The addresses in a state are always fully
// qualified. An empty src (no state yet) has no requirements.
func StateRequirements(src []byte, filename string) ([]resolve.Requirement, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil
	}
	var st struct {
		Version   *int `json:"version"`
		Resources []struct {
			Provider string `json:"provider"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(src, &st); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The decoder's own text names Go types; say what was expected.
			where := "the top level"
			if te.Field != "" {
				where = fmt.Sprintf("%q", te.Field)
			}
			return nil, &StateError{Filename: filename, Err: fmt.Errorf("not a valid state file: %s is a JSON %s (at byte %d)", where, te.Value, te.Offset)}
		}
		return nil, &StateError{Filename: filename, Err: fmt.Errorf("not a valid state file: %w", err)}
	}
	if st.Version == nil {
		return nil, &StateError{Filename: filename, Err: fmt.Errorf("not a state file: no format version")}
	}
	if *st.Version != 4 {
		return nil, &StateError{Filename: filename, Err: fmt.Errorf("state format version %d is not supported; only version 4 is (a run of OpenTofu or Terraform with this state upgrades it)", *st.Version)}
	}
	var addrs []tfaddr.Provider
	for i, r := range st.Resources {
		addr, err := parseStateProvider(r.Provider)
		if err != nil {
			return nil, &StateError{Filename: filename, Err: fmt.Errorf("resources[%d]: %w", i, err)}
		}
		addrs = append(addrs, addr)
	}
	reqs := resolve.ProviderRequirements(addrs, resolve.Origin{State: true, Range: hcl.Range{Filename: filename}})
	return reqs, nil
}

// parseStateProvider parses a resource's provider configuration address:
// [module.NAME.]...provider["HOST/NAMESPACE/TYPE"][.ALIAS].
func parseStateProvider(s string) (tfaddr.Provider, error) {
	const open = `provider["`
	i := strings.Index(s, open)
	if i < 0 {
		return tfaddr.Provider{}, fmt.Errorf("invalid provider configuration address %q: want provider[\"HOST/NAMESPACE/TYPE\"]", s)
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, `"]`)
	if j < 0 {
		return tfaddr.Provider{}, fmt.Errorf("invalid provider configuration address %q: no closing \"]", s)
	}
	addr := rest[:j]
	if strings.Count(addr, "/") != 2 {
		return tfaddr.Provider{}, fmt.Errorf("invalid provider configuration address %q: the provider address must be fully qualified", s)
	}
	p, err := provaddr.ParseNotLegacy(addr, "")
	if err != nil {
		return tfaddr.Provider{}, fmt.Errorf("invalid provider configuration address %q: %w", s, err)
	}
	return p, nil
}
