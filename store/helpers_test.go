package store_test

import (
	"context"
	"io"
	"log/slog"

	"github.com/osfoundry/osfoundry/store"
)

// quietListener is a listener on st that logs nothing, and the mail cache
// it keeps current.
func quietListener(st *store.Store) (*store.Listener, *store.MailCache) {
	l := st.NewListener(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return l, st.NewMailCache(l)
}

// startListener runs l until the returned stop is called; stop returns once
// Run has.
func startListener(l *store.Listener) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	return func() { cancel(); <-done }
}
