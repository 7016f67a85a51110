package store

// Waker wakes a background worker (the webhook and email senders, the timers) to look for work now.
type Waker struct{ c chan struct{} }

// NewWaker returns a Waker with no wake-up pending.
func NewWaker() Waker { return Waker{c: make(chan struct{}, 1)} }

// Wake asks the worker to look now. It never blocks.
func (w Waker) Wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// C receives the pending wake-up.
func (w Waker) C() <-chan struct{} { return w.c }

// WakeOn makes l call wake for each notification on topic, and each time l connects, since
// notifications sent while it was away are lost.
func WakeOn(l *Listener, topic Topic[struct{}], wake func()) {
	Listen(l, topic, func(struct{}) { wake() })
	l.Watch(func(connected bool) {
		if connected {
			wake()
		}
	})
}
