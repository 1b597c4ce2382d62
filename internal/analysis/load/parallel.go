package load

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// forEach calls f(i) for every i in [0, n), on up to GOMAXPROCS goroutines
// at once, each taking the lowest i not yet taken. It returns when every
// call has. f must be safe to call at once for different i; the reads of
// the load phase are (each writes only its own slot). A panic in f is
// raised again in forEach's caller once the other calls have returned (the
// first one, when several panic).
func ForEach(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var once sync.Once
	var panicked any
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					once.Do(func() { panicked = p })
				}
			}()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}
