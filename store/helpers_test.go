package store_test

import (
	"context"
	"io"
	"log/slog"

	"github.com/osfoundry/osfoundry/store"
)

// quietHub is a note hub on st that logs nothing.
func quietHub(st *store.Store) *store.NoteHub {
	return st.NewNoteHub(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// startHub runs hub until the returned stop is called; stop returns once Run
// has.
func startHub(hub *store.NoteHub) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); hub.Run(ctx) }()
	return func() { cancel(); <-done }
}
