package store_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/pgserver"
)

// TestReadsDoNotWaitForTheDiskAndACrashLosesOnlyThem: on a durable private
// cluster, an agent's notes, its status, a question and the owner's answer
// commit as they always did; then the cluster is told that every
// synchronous commit waits for a standby that never comes
// (synchronous_standby_names), so that a write which waits for its WAL to be
// flushed hangs, and read_session_mail and an owner's read mark still
// return: they do not wait. PostgreSQL is then killed with SIGKILL and
// started again on the same folder: every note, the status and the answer
// are there; only receipts and marks written after the last synchronous
// commit may be missing.
func TestReadsDoNotWaitForTheDiskAndACrashLosesOnlyThem(t *testing.T) {
	t.Parallel()
	if _, err := pgserver.FindBinDir(); err != nil {
		t.Fatalf("needs the PostgreSQL server binaries: %v", err)
	}
	ctx := context.Background()
	root, err := os.MkdirTemp("", "osfcrash")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o711)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := filepath.Join(root, "pg")
	srv, err := pgserver.Start(ctx, pgserver.Options{DataDir: dir, Database: "app", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	st, err := store.Open(ctx, srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	f := fillMailFixture(t, st)
	ws := f.owner.WorkspaceID

	// What must survive: notes, a status, an answered question.
	var noteIDs []int64
	for i := range 5 {
		n, _, err := st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: f.connID, SessionType: f.sess.Type,
			SessionID: f.sess.PublicID, Subject: "Note " + strconv.Itoa(i), Body: "b", IdempotencyKey: "k" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		noteIDs = append(noteIDs, n.ID)
	}
	task := "Crash test"
	if _, err := st.SetStatus(ctx, ws, f.connID, store.StatusUpdate{Task: store.StatusField{Set: true, Value: &task}}); err != nil {
		t.Fatal(err)
	}
	q, _, err := st.AskQuestion(ctx, store.AgentQuestion{WorkspaceID: ws, ConnectionID: f.connID, SessionType: f.sess.Type,
		SessionID: f.sess.PublicID, Text: "Ship it?", Options: []string{"Yes", "No"}, IdempotencyKey: "q"})
	if err != nil {
		t.Fatal(err)
	}
	yes := 0
	if _, err := st.AnswerQuestion(ctx, store.Answer{WorkspaceID: ws, OwnerID: f.owner.ID, QuestionID: q.ID, Option: &yes}); err != nil {
		t.Fatal(err)
	}
	owners, _, err := st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageNote, Subject: "To all", Body: "Owner's note"})
	if err != nil {
		t.Fatal(err)
	}
	noteIDs = append(noteIDs, owners.ID)

	// From here on a commit that waits for its WAL flush never returns.
	admin, err := pgx.Connect(ctx, srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = 'absent'`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	for {
		var v string
		if err := admin.QueryRow(ctx, `SELECT setting FROM pg_settings WHERE name = 'synchronous_standby_names'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v == "absent" {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling a condition: the reload reaches the backend
	}
	// A write that waits does hang now (the fixture is right). The
	// checkpointer tells the commits of the new rule a moment after the
	// backends see it: write until one hangs.
	for try := 0; ; try++ {
		hung, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err = admin.Exec(hung, fmt.Sprintf(`CREATE TABLE waits_%d (v int)`, try))
		cancel()
		if err != nil {
			break
		}
		if try == 100 {
			t.Fatal("a synchronous commit returned without a standby")
		}
		time.Sleep(20 * time.Millisecond) // polling a condition: the rule reaches the commits
	}
	// Reads return: their receipts and marks do not wait.
	read, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	got, _, err := st.ReadAgentMail(read, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 20)
	if err != nil {
		t.Fatalf("read_session_mail waited for the disk: %v", err)
	}
	// Every note of the session: the agent's, the question, the answer's
	// and the owner's.
	if len(got) < len(noteIDs) {
		t.Fatalf("read %d notes, want at least %d", len(got), len(noteIDs))
	}
	noteIDs = noteIDs[:0]
	for _, n := range got {
		noteIDs = append(noteIDs, n.ID)
	}
	if _, err := st.MarkMailRead(read, f.owner.ID, f.sess.ID, owners.ID); err != nil {
		t.Fatalf("the owner's read mark waited for the disk: %v", err)
	}
	st.Close()

	// kill -9 of the whole cluster (postgres leads its process group).
	pidFile, err := os.ReadFile(filepath.Join(srv.DataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.Stop() // waits for the postmaster
	for syscall.Kill(-pid, 0) == nil {
		time.Sleep(10 * time.Millisecond) // polling a condition: every backend gone
	}
	// Started again without the standby rule.
	auto := filepath.Join(srv.DataDir, "postgresql.auto.conf")
	conf, err := os.ReadFile(auto)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(conf), "\n") {
		if !strings.HasPrefix(l, "synchronous_standby_names") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(auto, []byte(strings.Join(kept, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	// A killed backend can hold the old shared memory a moment after its
	// process is gone from the group: start again until it is released.
	var again *pgserver.Server
	for try := 0; ; try++ {
		again, err = pgserver.Start(ctx, pgserver.Options{DataDir: dir, Database: "app", Logger: log})
		if err == nil || try == 50 || !strings.Contains(err.Error(), "pre-existing shared memory block") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Stop)
	db, err := pgx.Connect(ctx, again.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var notes int
	var status, answer *string
	err = db.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM notes WHERE id = ANY($1)),
			(SELECT task FROM statuses WHERE connection_id = $2),
			(SELECT answer FROM questions WHERE note_id = $3)`, noteIDs, f.connID, q.ID).Scan(&notes, &status, &answer)
	if err != nil {
		t.Fatal(err)
	}
	if notes != len(noteIDs) || status == nil || *status != task || answer == nil || *answer != "Yes" {
		t.Fatalf("after the crash: %d of %d notes, status %v, answer %v", notes, len(noteIDs), status, answer)
	}
}
