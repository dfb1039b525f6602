package source

import (
	"context"

	"github.com/tflock/tflock/source/internal/display"
)

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of [Event]. New kinds may be added; handlers should ignore kinds
// they do not know.
const (
	// EventResolving: the versions of Package are being looked up.
	EventResolving EventKind = iota + 1
	// EventVersionChosen: a version was selected for Package (Detail says why).
	EventVersionChosen
	// EventFetchStarted: a download or copy of Package began; Total is its
	// size in bytes when known, else 0.
	EventFetchStarted
	// EventFetchProgress: Bytes of Total have been transferred.
	EventFetchProgress
	// EventFetchDone: Package is on disk.
	EventFetchDone
	// EventVerified: Package matched the recorded checksums (or was trusted
	// on first use; Detail says which).
	EventVerified
	// EventCacheHit: Package was found in a cache and not downloaded.
	EventCacheHit
	// EventCacheWait: another process or goroutine holds the cache entry of
	// Package; this one waits for it.
	EventCacheWait
	// EventLockChanged: the lock entry of Package changed (Detail says how).
	EventLockChanged
	// EventWarning: something worth telling a user, in Detail.
	EventWarning
)

var eventKindNames = [...]string{
	EventResolving:     "resolving",
	EventVersionChosen: "version chosen",
	EventFetchStarted:  "fetch started",
	EventFetchProgress: "fetch progress",
	EventFetchDone:     "fetch done",
	EventVerified:      "verified",
	EventCacheHit:      "cache hit",
	EventCacheWait:     "cache wait",
	EventLockChanged:   "lock changed",
	EventWarning:       "warning",
}

// String returns a short lower-case name for the kind.
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "unknown event"
}

// Event is one progress report. The library never prints; it hands events to
// an [Events] handler that the caller supplies. An event sent through
// [Emit] never holds a credential.
type Event struct {
	// Kind says what happened.
	Kind    EventKind
	Package Package // the package concerned; nil for events about the whole run
	Bytes   int64   // bytes done, for EventFetchProgress
	Total   int64   // total bytes when known, else 0
	Detail  string  // human-readable detail; never contains credentials
	// Unit names the unit of work the event belongs to, as given to
	// [WithUnit] on the context of the call that caused it; "" when the
	// context names none. A wrapper that runs many configurations at once
	// on one shared cache and shared sources tells their events apart by
	// it.
	Unit string
}

// Events receives progress reports. Implementations must be safe for
// concurrent use: events arrive from many goroutines at once. A nil Events
// value is valid wherever one is accepted and discards everything.
type Events interface {
	Event(e Event)
}

// EventsFunc adapts a function to the [Events] interface.
type EventsFunc func(Event)

// Event calls f(e).
func (f EventsFunc) Event(e Event) { f(e) }

// Emit sends e to h if h is not nil. It is the helper sources use so that a
// nil handler is always allowed, and the one place where an event loses
// the credentials a module address may carry: Package (its Source, so
// that both its String and its ForDisplay) and Detail are redacted
// before h sees them, whoever emits the event. Code that has a context
// uses [EmitContext], which also attributes the event to its unit.
func Emit(h Events, e Event) {
	if h != nil {
		h.Event(redactEvent(e))
	}
}

type unitKey struct{}

type eventsKey struct{}

// WithUnit returns a context whose events are attributed to unit: every
// event that a call given this context causes (in Init, in a shared cache,
// in a shared source) carries unit in [Event.Unit]. Wrappers that run many
// configurations at once give each its own unit name.
func WithUnit(ctx context.Context, unit string) context.Context {
	return context.WithValue(ctx, unitKey{}, unit)
}

// UnitOf returns the unit that [WithUnit] attached to ctx, or "".
func UnitOf(ctx context.Context) string {
	u, _ := ctx.Value(unitKey{}).(string)
	return u
}

// WithEvents returns a context whose events also go to h, in addition to
// the handlers the sources, the cache and Init were configured with (and
// to the handlers earlier WithEvents calls attached to ctx). It lets a
// caller collect the events of one call when the sources and the cache are
// shared with other calls. Give a handler either here or in an options
// struct, not both, or it receives each event twice.
func WithEvents(ctx context.Context, h Events) context.Context {
	if h == nil {
		return ctx
	}
	if prev, ok := ctx.Value(eventsKey{}).(Events); ok {
		h = multiEvents{prev, h}
	}
	return context.WithValue(ctx, eventsKey{}, h)
}

// multiEvents sends each event to both handlers.
type multiEvents [2]Events

func (m multiEvents) Event(e Event) {
	m[0].Event(e)
	m[1].Event(e)
}

// EmitContext sends e to h (if not nil) and to the handlers [WithEvents]
// attached to ctx, with e.Unit set to the unit [WithUnit] attached to ctx
// when e has none. It is the helper sources, the cache and Init use for
// every event caused by a call with a context.
func EmitContext(ctx context.Context, h Events, e Event) {
	if ctx == nil {
		Emit(h, e)
		return
	}
	if e.Unit == "" {
		e.Unit = UnitOf(ctx)
	}
	Emit(h, e)
	if ch, ok := ctx.Value(eventsKey{}).(Events); ok {
		Emit(ch, e) // through Emit, as every handler is given an event
	}
}

// redactEvent returns e without the credentials of a module address: in
// its package (see [ModulePackage]) and in its detail. Every path that
// hands an event to a handler goes through it.
func redactEvent(e Event) Event {
	e.Package = redacted(e.Package)
	e.Detail = display.Redact(e.Detail)
	return e
}
