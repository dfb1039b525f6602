package install

import (
	"errors"
	"io/fs"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/resolve/config"
)

// readState returns the requirements of the providers a state file's
// resources use ([Options.StateFile]); a missing file has none.
func readState(path string) ([]resolve.Requirement, error) {
	reqs, err := config.ReadStateFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return reqs, err
}
