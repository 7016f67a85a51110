package main

import (
	"context"
	"testing"
)

// TestBackgroundStopsOnItsOwnSignal: the caller's cancellation does not
// reach a background goroutine; cancel asks it to stop, stop also waits for
// it to end.
func TestBackgroundStopsOnItsOwnSignal(t *testing.T) {
	caller, cancelCaller := context.WithCancel(context.Background())
	got := make(chan context.Context, 1)
	release, finished := make(chan struct{}), make(chan struct{})
	b := startBackground(caller, func(ctx context.Context) {
		got <- ctx
		<-ctx.Done()
		<-release
		close(finished)
	})
	ctx := <-got
	cancelCaller()
	if ctx.Err() != nil {
		t.Fatal("the caller's cancellation reached the goroutine")
	}
	b.cancel()
	<-ctx.Done()
	close(release)
	b.stop()
	select {
	case <-finished:
	default:
		t.Fatal("stop returned before the goroutine ended")
	}
}
