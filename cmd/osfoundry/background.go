package main

import "context"

// background is a goroutine serve runs beside the HTTP server (the note hub,
// the webhook sender) until serve stops it.
type background struct {
	cancelCtx context.CancelFunc
	done      chan struct{}
}

// startBackground runs fn in a goroutine with a context of its own: a
// signal that cancels ctx does not reach it, so serve decides when and in
// which order each one stops.
func startBackground(ctx context.Context, fn func(context.Context)) *background {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &background{cancelCtx: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		fn(ctx)
	}()
	return b
}

// cancel asks the goroutine to stop, without waiting for it.
func (b *background) cancel() { b.cancelCtx() }

// stop asks the goroutine to stop and waits until it has.
func (b *background) stop() {
	b.cancelCtx()
	<-b.done
}
