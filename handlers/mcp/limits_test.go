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
