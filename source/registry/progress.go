package registry

import (
	"context"

	"github.com/tflock/tflock/source"
)

// progressEvery is how many bytes pass between two EventFetchProgress
// reports.
const progressEvery = 256 << 10

// progress reports a package download to the Events handler.
type progress struct {
	ctx   context.Context
	ev    source.Events
	pkg   source.Package
	total int64
	done  int64
	last  int64
}

func (s *Source) newProgress(ctx context.Context, pkg source.Package) *progress {
	return &progress{ctx: ctx, ev: s.o.Events, pkg: pkg}
}

// start is the request's started callback: a new attempt begins.
func (p *progress) start(total int64) {
	p.total, p.done, p.last = total, 0, 0
	source.EmitContext(p.ctx, p.ev, source.Event{Kind: source.EventFetchStarted, Package: p.pkg, Total: total})
}

// Write counts bytes and reports progress now and then.
func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.done-p.last >= progressEvery || p.total > 0 && p.done == p.total {
		p.last = p.done
		source.EmitContext(p.ctx, p.ev, source.Event{Kind: source.EventFetchProgress, Package: p.pkg, Bytes: p.done, Total: p.total})
	}
	return len(b), nil
}

func (p *progress) finish(location string) {
	source.EmitContext(p.ctx, p.ev, source.Event{Kind: source.EventFetchDone, Package: p.pkg, Bytes: p.done, Total: p.total, Detail: location})
}

// warn gives a warning to Options.Warn and to Options.Events.
func (s *Source) warn(ctx context.Context, pkg source.Package, msg string) {
	s.o.Warn(msg)
	source.EmitContext(ctx, s.o.Events, source.Event{Kind: source.EventWarning, Package: pkg, Detail: msg})
}
