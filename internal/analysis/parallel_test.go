package analysis

import (
	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"sync/atomic"
	"testing"
)

func TestForEachCallsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 1000} {
		calls := make([]atomic.Int32, n)
		load.ForEach(n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: f(%d) called %d times", n, i, c)
			}
		}
	}
}

func TestForEachRaisesPanicInCaller(t *testing.T) {
	var done atomic.Int32
	got := load.Crashed(func() {
		load.ForEach(100, func(i int) {
			if i == 7 {
				panic("seven")
			}
			done.Add(1)
		})
	})
	if got != "seven" {
		t.Fatalf("panic raised in the caller = %v, want seven", got)
	}
	if done.Load() == 0 {
		t.Fatal("no other call ran")
	}
}
