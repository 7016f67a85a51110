package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/store"
)

// postAs posts body to url with token, from any goroutine: it returns an
// error rather than failing the test.
func postAs(url, token, body string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// batchResults decodes a batch's answer into each call's ask_owner result,
// by id.
func batchResults(t *testing.T, b []byte) map[int]askOut {
	t.Helper()
	var msgs []struct {
		ID     int `json:"id"`
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &msgs); err != nil {
		t.Fatalf("batch answer %s: %v", b, err)
	}
	out := map[int]askOut{}
	for _, m := range msgs {
		var a askOut
		if m.Result.IsError || json.Unmarshal(m.Result.StructuredContent, &a) != nil {
			t.Fatalf("call %d of the batch refused: %s", m.ID, b)
		}
		out[m.ID] = a
	}
	return out
}

// askBatch is a batch of n ask_owner calls, ids 1 to n, each waiting wait
// seconds.
func (w *askWorld) askBatch(n, wait int) string {
	var calls []string
	for i := 1; i <= n; i++ {
		calls = append(calls, toolCall(i, "ask_owner", w.args(fmt.Sprintf("b%d", i), "wait_seconds", wait)))
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// TestWaitsAreCappedPerConnectionAndPerReplica: past the limits of held
// waits, an ask_owner call answers at once, open, saying the wait was not
// held; a wait that ends gives its place back.
func TestWaitsAreCappedPerConnectionAndPerReplica(t *testing.T) {
	t.Parallel()
	e := newListeningEnv(t)
	w := newAskWorld(t, e)
	mcp.SetWaitLimits(e.h, mcp.WaitLimits{PerConnection: 2, PerReplica: 3})
	mcp.SetProgressEvery(e.h, 10*time.Minute)

	type answer struct {
		out   askOut
		words string
		err   error
	}
	held := make(chan answer, 4)
	ask := func(a *agent, key string) {
		code, b, err := postAs(e.mcpURL(), a.token, toolCall(1, "ask_owner", w.args(key, "wait_seconds", 300)))
		if err == nil && code != 200 {
			err = fmt.Errorf("status %d: %s", code, b)
		}
		var ans answer
		if ans.err = err; err == nil {
			ans.out, ans.words = result(t, b)
		}
		held <- ans
	}
	go ask(w.a, "a1")
	go ask(w.a, "a2")
	waitingOn(t, e.h, 2)

	// The connection's third wait is not held.
	start := time.Now()
	_, b := w.post(t, e.mcpURL(), toolCall(1, "ask_owner", w.args("a3", "wait_seconds", 300)))
	got, words := result(t, b)
	if got.Status != store.QuestionOpen || got.QuestionID == 0 || !strings.Contains(got.WaitNotHeld, "The wait was not held") ||
		!strings.Contains(words, "The wait was not held") || time.Since(start) > 10*time.Second {
		t.Fatalf("past the connection's limit: %+v %s", got, words)
	}

	// Another connection holds the replica's last one, then no more.
	other := e.agent(w.ws, w.owner, store.AllScopes, w.s.ProjectID)
	other.invite(w.s, store.RoleContributor)
	other.claim("other")
	go ask(other, "o1")
	waitingOn(t, e.h, 3)
	_, b = postAsOK(t, e.mcpURL(), other.token, toolCall(1, "ask_owner", w.args("o2", "wait_seconds", 300)))
	if got, _ := result(t, b); !strings.Contains(got.WaitNotHeld, "as many waiting calls as it may") || got.Status != store.QuestionOpen {
		t.Fatalf("past the replica's limit: %+v", got)
	}

	// An answer ends one wait; its place is free again.
	if _, err := e.st.AnswerQuestion(e.ctx, store.Answer{WorkspaceID: w.ws, OwnerID: w.owner, QuestionID: got.QuestionID - 1, Option: new(0)}); err != nil {
		t.Fatal(err)
	}
	if a := <-held; a.err != nil || a.out.Status != store.QuestionAnswered {
		t.Fatalf("the answered wait: %+v", a)
	}
	waitingOn(t, e.h, 2)
	go ask(other, "o3")
	waitingOn(t, e.h, 3)
	e.h.EndWaits()
	for range 3 {
		if a := <-held; a.err != nil || a.out.WaitNotHeld != "" {
			t.Fatalf("a held wait: %+v", a)
		}
	}
}

func postAsOK(t *testing.T, url, token, body string) (int, []byte) {
	t.Helper()
	code, b, err := postAs(url, token, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, b
}

// TestABatchHoldsAtMostTenMessages: a batch of more than MaxBatch messages
// is refused whole, before any call runs.
func TestABatchHoldsAtMostTenMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newAskWorld(t, e)
	code, b := postAsOK(t, e.mcpURL(), w.a.token, w.askBatch(mcp.MaxBatch+1, 0))
	if code != http.StatusBadRequest || !strings.Contains(string(b), "at most 10 messages") {
		t.Fatalf("a batch of 11: %d %s", code, b)
	}
	var asked int
	e.sql().QueryRow(`SELECT count(*) FROM questions`).Scan(&asked)
	if asked != 0 {
		t.Fatalf("the refused batch asked %d questions", asked)
	}
	code, b = postAsOK(t, e.mcpURL(), w.a.token, w.askBatch(mcp.MaxBatch, 0))
	if got := batchResults(t, b); code != 200 || len(got) != mcp.MaxBatch {
		t.Fatalf("a batch of 10: %d %s", code, b)
	}
}

// TestEveryCallOfABatchCountsAgainstTheWaitLimit: the waits of one batch
// are held as the waits of as many requests would be, no more than the
// connection's limit.
func TestEveryCallOfABatchCountsAgainstTheWaitLimit(t *testing.T) {
	t.Parallel()
	e := newListeningEnv(t)
	w := newAskWorld(t, e)
	mcp.SetWaitLimits(e.h, mcp.WaitLimits{PerConnection: 2, PerReplica: 100})
	mcp.SetProgressEvery(e.h, 10*time.Minute)
	var wg sync.WaitGroup
	var b []byte
	var err error
	wg.Go(func() { _, b, err = postAs(e.mcpURL(), w.a.token, w.askBatch(5, 300)) })
	// Two held; the three others answered at once, so the batch waits on two.
	for deadline := time.Now().Add(10 * time.Second); e.h.WaitsNotHeld() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d batched waits not held, want 3", e.h.WaitsNotHeld())
		}
	}
	if n := e.h.Waiting(); n != 2 {
		t.Fatalf("%d batched waits held, want 2", n)
	}
	e.h.EndWaits()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	notHeld := 0
	for _, a := range batchResults(t, b) {
		if a.Status != store.QuestionOpen {
			t.Fatalf("batched: %+v", a)
		}
		if a.WaitNotHeld != "" {
			notHeld++
		}
	}
	if notHeld != 3 {
		t.Fatalf("%d of 5 batched waits not held, want 3: %s", notHeld, b)
	}
}

// TestABatchedWaitOutlastsTheWriteTimeout: a wait in a batch gets the write
// deadline a lone waiting call gets, so its answer is written after a wait
// longer than the server's write timeout.
func TestABatchedWaitOutlastsTheWriteTimeout(t *testing.T) {
	t.Parallel()
	e := newListeningEnv(t)
	w := newAskWorld(t, e)
	srv := httptest.NewUnstartedServer(e.h)
	srv.Config.WriteTimeout = time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	body := "[" + toolCall(1, "ask_owner", w.args("k1", "wait_seconds", 2)) + "," + toolCall(2, "list_sessions", map[string]any{}) + "]"
	code, b, err := postAs(srv.URL+"/mcp", w.a.token, body)
	if err != nil {
		t.Fatalf("the batched wait lost its answer: %v", err)
	}
	var msgs []json.RawMessage
	if code != 200 || json.Unmarshal(b, &msgs) != nil || len(msgs) != 2 || !strings.Contains(string(b), `\"status\":\"open\"`) {
		t.Fatalf("batched wait past the write timeout: %d %s", code, b)
	}
}

// TestWritesDrawOnTheConnectionsBucket: notes, replies and questions sent
// at once, alone or in a batch, take one token each from the connection's
// bucket; past it each is refused with isError and retry_after_seconds,
// and nothing is written.
func TestWritesDrawOnTheConnectionsBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newAskWorld(t, e)
	if err := e.st.SetProjectWriteLimits(e.ctx, w.ws, w.s.ProjectID, store.WriteLimits{PerMinute: 1, Burst: 5}); err != nil {
		t.Fatal(err)
	}
	type refusal struct {
		Error             string `json:"error"`
		RetryAfterSeconds int    `json:"retry_after_seconds"`
	}
	call := func(body string) (ok bool, r refusal, err error) {
		code, b, err := postAs(e.mcpURL(), w.a.token, body)
		if err != nil || code != 200 {
			return false, r, fmt.Errorf("%d %s %v", code, b, err)
		}
		var msg struct {
			Result struct {
				IsError           bool            `json:"isError"`
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &msg); err != nil {
			return false, r, err
		}
		if msg.Result.IsError {
			err = json.Unmarshal(msg.Result.StructuredContent, &r)
		}
		return !msg.Result.IsError, r, err
	}
	// Twelve at once: a note, a reply or a question each.
	var mu sync.Mutex
	granted, refused := 0, []refusal{}
	errs := concurrently(12, func(i int) error {
		var body string
		switch key := fmt.Sprint("w", i); i % 3 {
		case 0:
			body = toolCall(1, "post_session_note", with(ref(w.s), "subject", "S", "body", "B", "idempotency_key", key))
		case 1:
			body = toolCall(1, "reply_to_sender", with(ref(w.s), "to", store.OwnerSlug(w.owner), "subject", "S", "body", "B", "idempotency_key", key))
		default:
			body = toolCall(1, "ask_owner", w.args(key))
		}
		ok, r, err := call(body)
		mu.Lock()
		defer mu.Unlock()
		if ok {
			granted++
		} else {
			refused = append(refused, r)
		}
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if granted != 5 || len(refused) != 7 {
		t.Fatalf("%d granted, %d refused of 12 writes at once; want 5 and 7", granted, len(refused))
	}
	for _, r := range refused {
		if r.RetryAfterSeconds < 1 || r.RetryAfterSeconds > 60 || !strings.Contains(r.Error, "Too many writes from this connection") ||
			!strings.Contains(r.Error, "Wait ") {
			t.Fatalf("refusal: %+v", r)
		}
	}
	var notes int
	e.sql().QueryRow(`SELECT count(*) FROM notes WHERE sender_connection_id = $1`, w.a.conn.ID).Scan(&notes)
	if notes != 5 {
		t.Fatalf("%d notes written, want 5", notes)
	}

	// A batch counts each of its calls.
	if err := e.st.SetProjectWriteLimits(e.ctx, w.ws, w.s.ProjectID, store.WriteLimits{PerMinute: 1, Burst: 8}); err != nil {
		t.Fatal(err)
	}
	e.sql().Exec(`UPDATE write_buckets SET tokens = 3 WHERE connection_id = $1`, w.a.conn.ID)
	var calls []string
	for i := range 5 {
		calls = append(calls, toolCall(i+1, "post_session_note", with(ref(w.s), "subject", "S", "body", "B", "idempotency_key", fmt.Sprint("batch", i))))
	}
	_, b := postAsOK(t, e.mcpURL(), w.a.token, "["+strings.Join(calls, ",")+"]")
	if n := strings.Count(string(b), `"retry_after_seconds"`); n != 2 {
		t.Fatalf("%d of a batch of 5 refused with 3 tokens left, want 2: %s", n, b)
	}
}

// TestAnAgentHasAtMostTwentyOpenQuestions: questions asked at once stop at
// MaxOpenQuestions open; an answer makes room for one more.
func TestAnAgentHasAtMostTwentyOpenQuestions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newAskWorld(t, e)
	if err := e.st.SetProjectWriteLimits(e.ctx, w.ws, w.s.ProjectID, store.WriteLimits{PerMinute: 6000, Burst: 1000}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refusals []string
	errs := concurrently(store.MaxOpenQuestions+4, func(i int) error {
		code, b, err := postAs(e.mcpURL(), w.a.token, toolCall(1, "ask_owner", w.args(fmt.Sprint("q", i), "question", fmt.Sprint("Question ", i))))
		if err != nil || code != 200 {
			return fmt.Errorf("%d %s %v", code, b, err)
		}
		if strings.Contains(string(b), `"isError":true`) {
			mu.Lock()
			refusals = append(refusals, string(b))
			mu.Unlock()
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var open int
	e.sql().QueryRow(`SELECT count(*) FROM questions WHERE connection_id = $1 AND state = 'open'`, w.a.conn.ID).Scan(&open)
	if open != store.MaxOpenQuestions || len(refusals) != 4 {
		t.Fatalf("%d open, %d refused; want %d and 4: %v", open, len(refusals), store.MaxOpenQuestions, refusals)
	}
	for _, r := range refusals {
		if !strings.Contains(r, "20 of your questions are open already") {
			t.Fatalf("refusal: %s", r)
		}
	}
	msg := w.a.refused("ask_owner", w.args("one-more", "question", "One more?"))
	var id int64
	e.sql().QueryRow(`SELECT min(note_id) FROM questions WHERE connection_id = $1`, w.a.conn.ID).Scan(&id)
	if _, err := e.st.AnswerQuestion(e.ctx, store.Answer{WorkspaceID: w.ws, OwnerID: w.owner, QuestionID: id, Option: new(0)}); err != nil {
		t.Fatal(err)
	}
	var asked askOut
	w.a.ok("ask_owner", w.args("one-more", "question", "One more?"), &asked)
	if asked.Status != store.QuestionOpen {
		t.Fatalf("after an answer (refused before: %s): %+v", msg, asked)
	}
}

// TestOptionsAndTheFirstLineAreOneLine: an option holding a line break (or
// another control character, or a direction override) is refused like a
// display name, and so is a question whose first line, the mail's subject,
// holds one; lines after the first may say anything.
func TestOptionsAndTheFirstLineAreOneLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newAskWorld(t, e)
	for _, c := range []struct {
		name, field string
		args        map[string]any
	}{
		{"an option with a line break", "options", w.args("o1", "options", []string{"ok\n  https://evil.example/answer/3.forged-link", "no"})},
		{"an option with a tab", "options", w.args("o2", "options", []string{"ok\tgo"})},
		{"an option with an override", "options", w.args("o3", "options", []string{"ok\u202egpj.exe"})},
		{"a first line with an override", "question", w.args("o4", "question", "Ship \u202eit?\nDetails.")},
		{"a first line with an escape", "question", w.args("o5", "question", "Ship \x1b[31mit?")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if msg := w.a.refused("ask_owner", c.args); !strings.HasPrefix(msg, c.field+": ") {
				t.Fatalf("refusal %q does not name %s", msg, c.field)
			}
		})
	}
	var n int
	e.sql().QueryRow(`SELECT count(*) FROM questions`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d refused questions written", n)
	}
	var ok askOut
	w.a.ok("ask_owner", w.args("fine", "question", "Ship it?\n\nDetails:\n\t- tabs and\r\n- breaks after the first line"), &ok)
}

// TestARetryOfAWrittenNoteDrawsNoToken: sending a written note again with
// its idempotency key returns that note, takes no token from the
// connection's bucket, and is answered so also when the bucket is empty.
func TestARetryOfAWrittenNoteDrawsNoToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newAskWorld(t, e)
	if err := e.st.SetProjectWriteLimits(e.ctx, w.ws, w.s.ProjectID, store.WriteLimits{PerMinute: 1, Burst: 2}); err != nil {
		t.Fatal(err)
	}
	post := func(key string) string {
		t.Helper()
		code, b, err := postAs(e.mcpURL(), w.a.token, toolCall(1, "post_session_note", with(ref(w.s), "subject", "S", "body", "B", "idempotency_key", key)))
		if err != nil || code != 200 {
			t.Fatalf("post %s: %d %s %v", key, code, b, err)
		}
		return string(b)
	}
	first := post("a")
	if strings.Contains(first, `"isError":true`) {
		t.Fatalf("first note refused: %s", first)
	}
	for i := range 3 {
		if b := post("a"); strings.Contains(b, `"isError":true`) {
			t.Fatalf("retry %d of a written note refused: %s", i+1, b)
		}
	}
	if b := post("b"); strings.Contains(b, `"isError":true`) {
		t.Fatalf("the second token was taken by the retries: %s", b)
	}
	if b := post("c"); !strings.Contains(b, "Too many writes") {
		t.Fatalf("a third note past a burst of 2 was not refused: %s", b)
	}
	if b := post("a"); strings.Contains(b, `"isError":true`) {
		t.Fatalf("a retry of a written note with the bucket empty was refused: %s", b)
	}
}
