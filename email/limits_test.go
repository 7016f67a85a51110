package email_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/email"
	"github.com/osfoundry/osfoundry/store"
)

// fireAll makes the next timer of every question due and fires them in one
// go, as the timers of a burst of questions fire, and wakes the sender.
func (w *world) fireAll(t *testing.T) store.TimerResult {
	t.Helper()
	w.sql.Exec(`UPDATE questions SET due_at = now() - interval '1 second' WHERE timer <> 'done'`)
	r, err := w.st.FireQuestionTimers(context.Background(), 10, email.Composer{BaseURL: base}.Question)
	if err != nil {
		t.Fatal(err)
	}
	w.sender.Wake()
	return r
}

// TestABurstOfQuestionsIsOneEmail: questions whose notices fire together
// reach an owner as one email ("3 questions from @ada") with every
// question's links; the next question email to that owner waits out
// store.EmailFoldWindow, and what comes meanwhile folds into it.
func TestABurstOfQuestionsIsOneEmail(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	for i := range 3 {
		w.ask(t, fmt.Sprint("k", i), fmt.Sprintf("Question %d?", i+1), "Yes", "No")
	}
	if r := w.fireAll(t); r.Fired != 3 {
		t.Fatalf("fired %+v", r)
	}
	msgs := w.mp.WaitFor(t, 1)
	m := msgs[0]
	if m.Subject != "3 questions from @ada" {
		t.Fatalf("subject %q", m.Subject)
	}
	for i := range 3 {
		if !strings.Contains(m.Text, fmt.Sprintf("-- Question %d of 3 --", i+1)) || !strings.Contains(m.Text, fmt.Sprintf("> Question %d?", i+1)) {
			t.Fatalf("question %d missing from the folded mail:\n%s", i+1, m.Text)
		}
	}
	if n := strings.Count(m.Text, base+"/answer/"); n != 9 {
		t.Fatalf("%d answer links in the folded mail, want 9", n)
	}

	// Two more at once after it: one email, held until the window has passed.
	w.fire(t, w.ask(t, "k3", "Question 4?").ID)
	w.fire(t, w.ask(t, "k4", "Question 5?").ID)
	var rows int
	var held bool
	var ids []int64
	w.sql.QueryRow(`SELECT count(*) FROM mail_outbox WHERE kind IN ('question', 'reminder')`).Scan(&rows)
	w.sql.QueryRow(`SELECT next_attempt_at > now() + interval '10 seconds', question_ids FROM mail_outbox ORDER BY id DESC LIMIT 1`).Scan(&held, &ids)
	if rows != 2 || !held || len(ids) != 2 {
		t.Fatalf("%d question mails, the last held %v with questions %v; want 2, held, 2 questions", rows, held, ids)
	}
	if n := len(w.mp.Messages(t)); n != 1 {
		t.Fatalf("%d mails within the window, want 1", n)
	}
}

// TestAgentTextIsEncodedInEmailHeaders: an agent's display name holding an
// encoded word reaches the subject encoded whole, so a email client shows
// the characters as written, never the right-to-left override the encoded
// word spells.
func TestAgentTextIsEncodedInEmailHeaders(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	const name = "Build bot =?UTF-8?B?4oCu?=gpj.exe"
	w.sql.Exec(`UPDATE agent_profiles SET display_name = $1 WHERE connection_id = $2`, name, w.connID)
	w.sql.Exec(`UPDATE owners SET display_name = $1 WHERE id = $2`, "Olive =?UTF-8?B?4oCu?= Owner", w.owner.ID)
	w.ask(t, "k", "Deploy now?\nDetails follow.", "Yes", "No")
	w.fireAll(t)
	m := w.mp.WaitFor(t, 1)[0]
	if want := "Question from " + name + ": Deploy now?"; m.Subject != want {
		t.Fatalf("decoded subject %q, want %q", m.Subject, want)
	}
	if strings.Contains(m.Subject, "\u202e") || len(m.To) != 1 || strings.Contains(m.To[0].Name, "\u202e") {
		t.Fatalf("an override reached a header: %q %+v", m.Subject, m.To)
	}
	raw := strings.Join(m.Headers["Subject"], " ") + " " + strings.Join(m.Headers["To"], " ")
	if strings.Contains(raw, "=?UTF-8?B?4oCu?=") || !strings.Contains(raw, "=?UTF-8?B?") {
		t.Fatalf("raw headers let the encoded word through: %s", raw)
	}
}
