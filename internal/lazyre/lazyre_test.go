package lazyre

import (
	"sync"
	"testing"
)

func TestNew(t *testing.T) {
	re := New(`^[0-9a-f]{40}$`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if !re().MatchString("0123456789abcdef0123456789abcdef01234567") || re().MatchString("x") {
				t.Error("wrong match")
			}
		})
	}
	wg.Wait()
	first := re()
	if again := re(); again != first {
		t.Fatal("compiled twice")
	}
}

func TestNewPanicsOnFirstUse(t *testing.T) {
	re := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a bad pattern")
		}
	}()
	re()
}
