package store_test

import (
	"time"

	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
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
	f.st.SetWriteMinute(time.Millisecond) // posting as fast as it can, never out of tokens
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

// BenchmarkNoteIndexCost is BenchmarkPostAgentNote with a body of about
// 600 characters (a typical note) and of 10,000 (the longest), against the
// schema as it is and without what the inbox and search add to a note's
// write: the search column and its GIN index (notes_search_workspace_idx), and the
// inbox's partial index (notes_inbox_idx). Run with -benchtime to taste;
// docs/performance.md has the figures.
func BenchmarkNoteIndexCost(b *testing.B) {
	words := strings.Fields("the rounding of orders_total drifts by a cent when refunds are split across two payment methods " +
		"so the fix rounds each part half even and carries the remainder to the last line v2.3.1 ships it")
	body := func(n int) string {
		var sb strings.Builder
		for i := 0; sb.Len() < n; i++ {
			sb.WriteString(words[i%len(words)])
			sb.WriteByte(' ')
		}
		return sb.String()[:n]
	}
	for _, schema := range []struct {
		name string
		drop string
	}{
		{"as it is", ""},
		{"without search", `ALTER TABLE notes DROP COLUMN search`},
		{"without search or inbox index", `ALTER TABLE notes DROP COLUMN search; DROP INDEX notes_inbox_idx`},
	} {
		for _, size := range []int{600, 10000} {
			b.Run(fmt.Sprintf("%s/body %d", schema.name, size), func(b *testing.B) {
				f := newMailFixture(b)
				f.st.SetWriteMinute(time.Millisecond)
				if schema.drop != "" {
					storetest.SQL(b, f.st).Exec(schema.drop)
				}
				text := body(size)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, _, err := f.st.PostAgentNote(context.Background(), store.AgentNote{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
						SessionType: f.sess.Type, SessionID: f.sess.PublicID, Subject: "Rounding", Body: text, IdempotencyKey: "bench-" + strconv.Itoa(i)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
