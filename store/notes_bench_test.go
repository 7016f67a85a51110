package store_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// The note write path without HTTP or MCP, for before/after figures of the
// store's side of post_session_note (cmd/osfoundry-bench measures the whole
// tool against a one-statement physical insert):
//
//	go test -run '^$' -bench 'InsertNote|PostAgentNote' -benchtime 3s ./store/
//
// All write to one session, as the agents of one session do: the parallel
// writers queue on its lock.

// BenchmarkInsertNote is the note transaction alone: BEGIN, the session lock
// by the event sequence, the note with its idempotency key, the event with
// the outbox and the notifications, COMMIT.
func BenchmarkInsertNote(b *testing.B) {
	f := newMailFixture(b)
	n := f.benchNote()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n.IdempotencyKey = new("bench-" + strconv.Itoa(i))
		if _, err := f.st.InsertNote(context.Background(), n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsertNoteParallel is the note transaction from 8 writers per
// GOMAXPROCS at once.
func BenchmarkInsertNoteParallel(b *testing.B) {
	f := newMailFixture(b)
	var seq atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		n := f.benchNote()
		for pb.Next() {
			n.IdempotencyKey = new("bench-" + strconv.FormatInt(seq.Add(1), 10))
			if _, err := f.st.InsertNote(context.Background(), n); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkPostAgentNote is the store's whole post_session_note: the
// session, invitation and profile lookup, then the note transaction.
func BenchmarkPostAgentNote(b *testing.B) {
	f := newMailFixture(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, err := f.st.PostAgentNote(context.Background(), store.AgentNote{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
			SessionType: f.sess.Type, SessionID: f.sess.PublicID, Subject: "Bench", Body: "A note", IdempotencyKey: "bench-" + strconv.Itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchNote is an agent's note to the fixture's session.
func (f *mailFixture) benchNote() *store.Note {
	return &store.Note{WorkspaceID: f.owner.WorkspaceID, SessionID: f.sess.ID, SenderKind: store.SenderAgent, SenderConnectionID: &f.connID,
		SenderSlug: "bench", SenderName: "Bench", MessageType: store.MessageNote, Subject: "Bench", Body: "A note"}
}
