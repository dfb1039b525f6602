package install

import (
	"context"
	"fmt"
	"strings"

	"github.com/tflock/tflock/resolve"
	"github.com/tflock/tflock/source"
)

// warnTranslated warns, as tofu does, about the providers whose version
// the selection carried over from their predecessor's lock entry
// (hashicorp/X of Terraform's registry to hashicorp/X of OpenTofu's; see
// [resolve.Predecessor]).
func (r *run) warnTranslated(ctx context.Context, sel *resolve.Selection) {
	var lines []string
	for _, p := range sel.Providers {
		if p.Reason != resolve.Translated {
			continue
		}
		old, _ := resolve.Predecessor(p.Addr)
		lines = append(lines, fmt.Sprintf("%s => %s (%s)", old, p.Addr, p.Version))
	}
	if len(lines) == 0 {
		return
	}
	msg := "Dependency lock file entries automatically updated: " + strings.Join(lines, ", ") +
		"; the version selections were kept, not the hashes, because the OpenTofu project's provider releases are not byte-for-byte identical"
	r.mu.Lock()
	r.warnings = append(r.warnings, msg)
	r.mu.Unlock()
	source.EmitContext(ctx, r.s.Events, source.Event{Kind: source.EventWarning, Detail: msg})
}
