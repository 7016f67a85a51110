package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/store"
)

// askWorld is an agent invited to a session, and the workspace's owner.
type askWorld struct {
	e     *env
	a     *agent
	s     *store.Session
	ws    int64
	owner int64
}

func newAskWorld(t *testing.T, e *env) *askWorld {
	t.Helper()
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	s := e.session(ws, p, "team_session")
	a := e.agent(ws, owner, store.AllScopes, p)
	a.invite(s, store.RoleContributor)
	a.claim("asker")
	return &askWorld{e: e, a: a, s: s, ws: ws, owner: owner}
}

func (w *askWorld) args(key string, kv ...any) map[string]any {
	return with(with(ref(w.s), "question", "Which database?", "options", []string{"PostgreSQL", "SQLite"}, "idempotency_key", key), kv...)
}

// askOut is ask_owner's structured result.
type askOut struct {
	QuestionID int64      `json:"question_id"`
	Status     string     `json:"status"`
	Answer     string     `json:"answer"`
	AnsweredBy string     `json:"answered_by"`
	AnsweredAt *time.Time `json:"answered_at"`
	Duplicate  bool       `json:"duplicate"`
	// WaitNotHeld says why a call that asked to wait did not.
	WaitNotHeld string `json:"wait_not_held"`
}

// post posts one tools/call to url as the agent and returns the raw answer.
func (w *askWorld) post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+w.a.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res, b.Bytes()
}

// result decodes a tools/call answer (JSON, or the last message of an
// event stream) into its structured content and text.
func result(t *testing.T, b []byte) (askOut, string) {
	t.Helper()
	if bytes.HasPrefix(b, []byte("event:")) || bytes.Contains(b, []byte("\ndata:")) {
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && bytes.Contains(d, []byte(`"result"`)) {
				last = append([]byte(nil), d...)
			}
		}
		b = last
	}
	var msg struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	var words []string
	for _, c := range msg.Result.Content {
		words = append(words, c.Text)
	}
	var out askOut
	if msg.Result.IsError || json.Unmarshal(msg.Result.StructuredContent, &out) != nil {
		t.Fatalf("ask_owner refused: %s", strings.Join(words, ""))
	}
	return out, strings.Join(words, "")
}

// waitingOn waits until h holds n waiting calls.
func waitingOn(t *testing.T, h *mcp.Handler, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.Waiting() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls waiting, want %d", h.Waiting(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// answerSoon answers the question with its second option once the call
// waits on h.
func (w *askWorld) answerSoon(t *testing.T, h *mcp.Handler, st *store.Store, id func() int64) chan time.Time {
	answered := make(chan time.Time, 1)
	go func() {
		waitingOn(t, h, 1)
		at := time.Now()
		if _, err := st.AnswerQuestion(w.e.ctx, store.Answer{WorkspaceID: w.ws, OwnerID: w.owner, QuestionID: id(), Option: new(1)}); err != nil {
			t.Error(err)
		}
		answered <- at
	}()
	return answered
}

func TestAskOwnerWaitsForTheAnswer(t *testing.T) {
	t.Parallel()
	e := newListeningEnv(t)
	w := newAskWorld(t, e)
	// The waits' own looks come every 10 minutes here: only the
	// notification can end a wait early.
	mcp.SetProgressEvery(e.h, 10*time.Minute)

	// A call that does not wait answers open at once.
	var first askOut
	w.a.ok("ask_owner", w.args("k0"), &first)
	if first.Status != store.QuestionOpen || first.QuestionID == 0 || first.Duplicate {
		t.Fatalf("no wait: %+v", first)
	}

	// Answered while it waits, on this replica.
	answered := w.answerSoon(t, e.h, e.st, func() int64 { return first.QuestionID + 1 })
	res, b := w.post(t, e.mcpURL(), toolCall(1, "ask_owner", w.args("k1", "wait_seconds", 300)))
	got, words := result(t, b)
	took := time.Since(<-answered)
	if res.StatusCode != 200 || got.Status != store.QuestionAnswered || got.Answer != "SQLite" || got.AnsweredBy != "Owner" || got.AnsweredAt == nil {
		t.Fatalf("answered while waiting: %d %+v %s", res.StatusCode, got, words)
	}
	if took > 3*time.Second {
		t.Errorf("the answer reached the waiting call %v after it was given", took)
	}
	t.Logf("answer → waiting call on the same replica: %v", took)

	// A retry of an answered question answers at once, as answered.
	var again askOut
	w.a.ok("ask_owner", w.args("k1", "wait_seconds", 300), &again)
	if !again.Duplicate || again.Status != store.QuestionAnswered || again.Answer != "SQLite" {
		t.Fatalf("retry: %+v", again)
	}
}

func TestAskOwnerHearsAnAnswerGivenOnAnotherReplica(t *testing.T) {
	t.Parallel()
	e := newListeningEnv(t)
	w := newAskWorld(t, e)
	srv, h := e.replicaOn(t, true)
	mcp.SetProgressEvery(h, 10*time.Minute)
	var asked askOut
	w.a.ok("ask_owner", w.args("k"), &asked)
	// The agent waits on the other replica; the owner answers through this one's store.
	answered := w.answerSoon(t, h, e.st, func() int64 { return asked.QuestionID })
	_, b := w.post(t, srv.URL+"/mcp", toolCall(1, "ask_owner", w.args("k", "wait_seconds", 300)))
	got, _ := result(t, b)
	took := time.Since(<-answered)
	if got.Status != store.QuestionAnswered || !got.Duplicate || got.Answer != "SQLite" {
		t.Fatalf("across replicas: %+v", got)
	}
	if took > 3*time.Second {
		t.Errorf("the answer reached the other replica's waiting call %v after it was given", took)
	}
	t.Logf("answer → waiting call on another replica: %v", took)
}

func TestAskOwnerGivesBackOpenAtItsDeadline(t *testing.T) {
	t.Parallel()
	e := newListeningEnv(t)
	w := newAskWorld(t, e)
	start := time.Now()
	_, b := w.post(t, e.mcpURL(), toolCall(1, "ask_owner", w.args("k", "wait_seconds", 1)))
	got, words := result(t, b)
	if took := time.Since(start); got.Status != store.QuestionOpen || got.Answer != "" || took < time.Second || took > 5*time.Second {
		t.Fatalf("at the deadline after %v: %+v", took, got)
	}
	if !strings.Contains(words, "nothing is decided") && !strings.Contains(words, "no decision") {
		t.Errorf("an open result does not say nothing is decided: %s", words)
	}

	// A server that stops ends the waits at once, open.
	done := make(chan askOut, 1)
	go func() {
		_, b := w.post(t, e.mcpURL(), toolCall(2, "ask_owner", w.args("k2", "wait_seconds", 600)))
		got, _ := result(t, b)
		done <- got
	}()
	waitingOn(t, e.h, 1)
	e.h.EndWaits()
	select {
	case got := <-done:
		if got.Status != store.QuestionOpen {
			t.Fatalf("ended wait: %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a wait outlived EndWaits")
	}
}

// TestAskOwnerOutlastsTheWriteTimeout: behind a server whose write timeout
// is shorter than the wait (serve's is 60 s), the waiting call still gets
// its answer, and one that asked for progress gets notifications/progress
// on an event stream meanwhile.
func TestAskOwnerOutlastsTheWriteTimeout(t *testing.T) {
	t.Parallel()
	e := newListeningEnv(t)
	w := newAskWorld(t, e)
	mcp.SetProgressEvery(e.h, 300*time.Millisecond)
	srv := httptest.NewUnstartedServer(e.h)
	srv.Config.WriteTimeout = time.Second
	srv.Start()
	t.Cleanup(srv.Close)

	var asked askOut
	w.a.ok("ask_owner", w.args("k"), &asked)
	start := time.Now()
	res, b := w.post(t, srv.URL+"/mcp", toolCall(1, "ask_owner", w.args("k", "wait_seconds", 2)))
	got, _ := result(t, b)
	if res.StatusCode != 200 || got.Status != store.QuestionOpen || time.Since(start) < 2*time.Second {
		t.Fatalf("past the write timeout: %d %+v after %v", res.StatusCode, got, time.Since(start))
	}

	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask_owner","arguments":` + mustJSON(w.args("k", "wait_seconds", 2)) +
		`,"_meta":{"progressToken":"p1"}}}`
	res, b = w.post(t, srv.URL+"/mcp", body)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("a waiting call with a progress token: Content-Type %q", ct)
	}
	if n := bytes.Count(b, []byte(`"method":"notifications/progress"`)); n < 2 || !bytes.Contains(b, []byte(`"progressToken":"p1"`)) {
		t.Fatalf("%d progress notifications in %s", n, b)
	}
	if got, _ := result(t, b); got.Status != store.QuestionOpen {
		t.Fatalf("streamed result: %+v", got)
	}
}

// TestAnAnswerAfterTheWaitReachesTheAgentAsMail: answered after the call
// gave back open, the answer is unread mail for the agent (the hint of its
// next result), read_session_mail shows the question answered and the
// answer as the note that answers it, and the session's events say so; an
// expired question reaches it the same ways.
func TestAnAnswerAfterTheWaitReachesTheAgentAsMail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newAskWorld(t, e)
	var asked askOut
	w.a.ok("ask_owner", w.args("k"), &asked)
	if _, err := e.st.AnswerQuestion(e.ctx, store.Answer{WorkspaceID: w.ws, OwnerID: w.owner, QuestionID: asked.QuestionID, Option: new(0)}); err != nil {
		t.Fatal(err)
	}
	res := w.a.call("list_sessions", map[string]any{})
	if !strings.Contains(text(res), "1 unread note for you: team_session "+w.s.PublicID) {
		t.Fatalf("no unread hint after the answer: %s", text(res))
	}
	type note struct {
		ID          int64  `json:"id"`
		FromKind    string `json:"from_kind"`
		MessageType string `json:"message_type"`
		Body        string `json:"body"`
		InReplyTo   *int64 `json:"in_reply_to"`
		ForYou      bool   `json:"for_you"`
		Options     []string
		Status      string     `json:"status"`
		Answer      string     `json:"answer"`
		AnsweredBy  string     `json:"answered_by"`
		AnsweredAt  *time.Time `json:"answered_at"`
		Answers     *struct {
			QuestionID int64  `json:"question_id"`
			Question   string `json:"question"`
			Status     string `json:"status"`
		} `json:"answers"`
	}
	var mail struct{ Notes []note }
	w.a.ok("read_session_mail", ref(w.s), &mail)
	if len(mail.Notes) != 2 {
		t.Fatalf("mail: %+v", mail)
	}
	answer, question := mail.Notes[0], mail.Notes[1]
	if question.ID != asked.QuestionID || question.MessageType != "question" || question.Status != "answered" || question.Answer != "PostgreSQL" ||
		question.AnsweredBy != "Owner" || question.AnsweredAt == nil || len(question.Options) != 2 || question.ForYou {
		t.Errorf("the question in read_session_mail: %+v", question)
	}
	if !answer.ForYou || answer.Body != "PostgreSQL" || answer.InReplyTo == nil || *answer.InReplyTo != asked.QuestionID ||
		answer.Answers == nil || answer.Answers.Question != "Which database?" || answer.Answers.Status != "answered" || answer.FromKind != "owner" {
		t.Errorf("the answer in read_session_mail: %+v %+v", answer, answer.Answers)
	}
	var events struct {
		Events []struct {
			Kind    string
			Payload map[string]any
		}
	}
	w.a.ok("poll_resource_events", map[string]any{"resource_type": w.s.Type, "resource_id": w.s.PublicID, "after_sequence": 0}, &events)
	kinds := []string{}
	for _, ev := range events.Events {
		kinds = append(kinds, ev.Kind)
	}
	if strings.Join(kinds, ",") != "participant_invited,note_posted,note_posted,question_answered" {
		t.Errorf("events: %v", kinds)
	}

	// Expired: osFoundry's notice, the question's status, the event.
	var q2 askOut
	w.a.ok("ask_owner", w.args("k2", "question", "Deploy?"), &q2)
	e.sql().Exec(`UPDATE questions SET timer = 'expiry', due_at = now() WHERE note_id = $1`, q2.QuestionID)
	if r, err := e.st.FireQuestionTimers(e.ctx, 10, nil); err != nil || r.Expired != 1 {
		t.Fatalf("expire: %+v %v", r, err)
	}
	var again askOut
	w.a.ok("ask_owner", w.args("k2", "question", "Deploy?", "wait_seconds", 30), &again)
	if again.Status != store.QuestionExpired || again.Answer != "" {
		t.Fatalf("retry of an expired question: %+v", again)
	}
	mail.Notes = nil
	w.a.ok("read_session_mail", ref(w.s), &mail)
	notice := mail.Notes[0]
	if notice.FromKind != "osfoundry" || !notice.ForYou || notice.Answers == nil || notice.Answers.Status != "expired" || !strings.Contains(notice.Body, "No decision") {
		t.Errorf("the expiry notice: %+v", notice)
	}
	w.a.ok("poll_resource_events", map[string]any{"resource_type": w.s.Type, "resource_id": w.s.PublicID, "after_sequence": 4}, &events)
	if n := len(events.Events); n == 0 || events.Events[n-1].Kind != "question_expired" {
		t.Errorf("events after the expiry: %+v", events.Events)
	}
}
