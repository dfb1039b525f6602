package install

import (
	"fmt"
	"slices"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"

	"github.com/tflock/tflock/hash"
	"github.com/tflock/tflock/source"
)

// IncompleteLockWarningSummary begins the warning [Init] adds to
// [Result.Warnings] when it recorded checksums of some providers only for
// the platform it installs ([Options.Platform]): no origin vouched for
// their packages (a filesystem mirror, a plugin directory, an origin that
// reports no checksums), so the lock file cannot verify them on another
// platform. It is OpenTofu's warning, summary and detail word for word.
const IncompleteLockWarningSummary = "Incomplete lock file information for providers"

// incompleteLockWarning is the text of the warning for the providers
// (shown as [source.ProviderPackage.ForDisplay] shows them) and the
// platform, in the run's words: with OpenTofu's, OpenTofu v1.12.6
// internal/command/init.go, the diagnostic "Incomplete lock file
// information for providers" with the body
// incompleteLockFileInformationBody, as "summary: detail".
func incompleteLockWarning(providers []string, platform source.Platform, w Words) string {
	return fmt.Sprintf(IncompleteLockWarningSummary+": Due to your customized provider installation methods, %s was forced to calculate lock file checksums locally for the following providers:\n"+
		"  - %s\n\n"+
		"The current .terraform.lock.hcl file only includes checksums for %s, so %s running on another platform will fail to install these providers.\n\n"+
		"To calculate additional checksums for another platform, run:\n"+
		"  %s -platform=linux_amd64\n"+
		"(where linux_amd64 is the platform to generate)", w.Program, strings.Join(providers, "\n  - "), platform, w.Program, w.ProvidersLock)
}

// lockUpdate is what an install learned of one provider's hashes: the
// hashes computed from the packages here (local), whether the origin
// vouched for any hash that was recorded (signed), and the hashes the lock
// held for the same version before (prior).
type lockUpdate struct {
	local, prior []hash.Hash
	signed       bool
}

// vouchedByOrigin reports whether a recorded hash counts, for the
// incomplete lock warning, as vouched for: signed, or reported by the
// provider's origin registry (OpenTofu's "signed" hashes of
// ProvidersLockUpdated: SignedByAnyGPGKeys or ReportedByRegistry). A hash a
// mirror reports, or one computed here from a mirror's archive, does not.
func vouchedByOrigin(rec hash.Record) bool {
	return len(rec.Provenance.SignedBy) > 0 || len(rec.Provenance.Registries) > 0
}

// noteLockUpdate records, for the incomplete lock warning, the hashes of
// one platform's package of a provider that was fetched or taken from the
// cache for a new selection; as in OpenTofu, a package already installed
// (or cached) that matches the lock file is not noted.
func (r *run) noteLockUpdate(addr tfaddr.Provider, local, prior []hash.Hash, signed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lockUpdates == nil {
		r.lockUpdates = map[tfaddr.Provider]*lockUpdate{}
	}
	u := r.lockUpdates[addr]
	if u == nil {
		u = &lockUpdate{prior: lockable(prior)}
		r.lockUpdates[addr] = u
	}
	u.local = append(u.local, lockable(local)...)
	u.signed = u.signed || signed
}

// incompleteWarning returns the incomplete lock warning for the providers
// whose lock entry holds only what was computed here, or "" for none. As
// in OpenTofu, a provider is incomplete when no origin vouched for a hash
// of it and the lock held no hash for its version before, or held exactly
// the ones computed here (a previous run's incomplete entry). Like tofu,
// Init adds it only when the lock file changes.
func (r *run) incompleteWarning() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for addr, u := range r.lockUpdates {
		if u.signed {
			continue
		}
		local := slices.Compact(slices.Sorted(slices.Values(u.local)))
		prior := slices.Compact(slices.Sorted(slices.Values(u.prior)))
		if len(prior) > 0 && !slices.Equal(local, prior) {
			continue
		}
		names = append(names, source.ProviderPackage{Addr: addr}.ForDisplay())
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return incompleteLockWarning(names, r.s.Platform, r.s.words)
}
