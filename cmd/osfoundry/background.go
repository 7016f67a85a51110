package main

import "context"

// background is a goroutine serve runs beside the HTTP server until it stops it.
type background struct {
	cancelCtx context.CancelFunc
	done      chan struct{}
}

// startBackground runs fn with a context a signal does not cancel, so serve
// decides the order in which they stop.
func startBackground(ctx context.Context, fn func(context.Context)) *background {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &background{cancelCtx: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		fn(ctx)
	}()
	return b
}

func (b *background) cancel() { b.cancelCtx() }
func (b *background) stop() {
	b.cancelCtx()
	<-b.done
}
