package source_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tflock/tflock/source"
)

func TestEmitContextUnitAndHandlers(t *testing.T) {
	var mu sync.Mutex
	var opt, a, b []source.Event
	collect := func(into *[]source.Event) source.Events {
		return source.EventsFunc(func(e source.Event) {
			mu.Lock()
			*into = append(*into, e)
			mu.Unlock()
		})
	}
	ctx := source.WithUnit(context.Background(), "unit-a")
	ctx = source.WithEvents(ctx, collect(&a))
	ctx = source.WithEvents(ctx, collect(&b))
	source.EmitContext(ctx, collect(&opt), source.Event{Kind: source.EventWarning, Detail: "x"})
	// An event that already names its unit keeps it.
	source.EmitContext(ctx, nil, source.Event{Kind: source.EventWarning, Unit: "other"})
	if len(opt) != 1 || opt[0].Unit != "unit-a" {
		t.Fatalf("options handler got %+v, want one event of unit-a", opt)
	}
	for name, got := range map[string][]source.Event{"first": a, "second": b} {
		if len(got) != 2 || got[0].Unit != "unit-a" || got[1].Unit != "other" {
			t.Errorf("%s context handler got %+v, want events of unit-a then other", name, got)
		}
	}
	// A context without a unit or handlers: the options handler alone, no unit.
	opt = nil
	source.EmitContext(context.Background(), collect(&opt), source.Event{Kind: source.EventWarning})
	if len(opt) != 1 || opt[0].Unit != "" {
		t.Errorf("plain context: got %+v", opt)
	}
	if got := source.UnitOf(context.Background()); got != "" {
		t.Errorf("UnitOf(background) = %q", got)
	}
	source.EmitContext(ctx, nil, source.Event{}) // nil handler allowed
}
