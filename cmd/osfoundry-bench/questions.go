package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/store/testfactory"
)

// The answer scenario: an agent's ask_owner call waits for the owner's
// decision; the owner clicks an option (the answer POST of the session
// page's question box, as htmx sends it); the time from sending that POST
// to the waiting call's answer arriving, over many questions one at a time.

// answerScenario names the scenario for --only.
const answerScenario = "owner's answer → waiting ask_owner"

// answerResult is what the scenario measured.
type answerResult struct {
	Questions  int     `json:"questions"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	Maxms      float64 `json:"max_ms"`
	Failed     int     `json:"failed"`
	FirstError string  `json:"first_error,omitempty"`
}

// reply is how an ask_owner call ended, and when.
type reply struct {
	at     time.Time
	status string
	err    error
}

// runAnswers asks n questions, one at a time, with the first agent in the
// first session, each answered by the owner while the call waits.
func (fx *fixture) runAnswers(ctx context.Context, n int) (*answerResult, error) {
	s, a := fx.sessions[0], fx.agents[0]
	csrf, err := fx.ownerCSRF(s.ID)
	if err != nil {
		return nil, err
	}
	// Questions draw on the agent's write bucket, which the steps before
	// may have emptied.
	if err := fx.fillBuckets(ctx); err != nil {
		return nil, err
	}
	r := &answerResult{Questions: n}
	var took []time.Duration
	fail := func(err error) {
		r.Failed++
		if r.FirstError == "" {
			r.FirstError = err.Error()
		}
	}
	for i := range n {
		key := fx.key("ask")
		done := make(chan reply, 1)
		go func() {
			status, err := fx.askOwner(a.token, map[string]any{"session_type": s.Type, "session_id": s.PublicID,
				"question": fmt.Sprintf("Question %d: go ahead?", i), "options": []string{"Yes", "No"}, "wait_seconds": 30, "idempotency_key": key})
			done <- reply{time.Now(), status, err}
		}()
		id, early, err := fx.waitQuestion(ctx, a.connectionID, key, done)
		if err != nil {
			return nil, err
		}
		if early != nil {
			// Refused (past a limit), or it did not wait.
			fail(fmt.Errorf("ask_owner ended before the owner answered: %v", cmp.Or(early.err, errors.New(early.status))))
			continue
		}
		sent := time.Now()
		if err := fx.answer(s.ID, id, csrf); err != nil {
			fail(err)
			<-done
			continue
		}
		rep := <-done
		switch {
		case rep.err != nil:
			fail(rep.err)
		case rep.status != "answered":
			fail(fmt.Errorf("ask_owner ended %q", rep.status))
		default:
			took = append(took, rep.at.Sub(sent))
		}
	}
	if len(took) == 0 {
		return r, errors.New("no question was answered: " + r.FirstError)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	pct := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
	}
	r.P50ms, r.P99ms, r.Maxms = pct(0.50), pct(0.99), float64(took[len(took)-1].Microseconds())/1000
	return r, nil
}

// waitQuestion returns the id of the question the connection asked with
// key, once it is written (at most ten seconds), or the call's reply when the
// call ended first.
func (fx *fixture) waitQuestion(ctx context.Context, connectionID int64, key string, done <-chan reply) (int64, *reply, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		id, err := testfactory.QuestionByKey(ctx, fx.pool, connectionID, key)
		if err == nil {
			return id, nil, nil
		}
		select {
		case rep := <-done:
			return 0, &rep, nil
		default:
		}
		if time.Now().After(deadline) {
			return 0, nil, fmt.Errorf("the question %s was not written: %w", key, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// ownerCSRF is the owner's CSRF token, from the session page.
func (fx *fixture) ownerCSRF(sessionID int64) (string, error) {
	res, err := fx.owner.Get(fmt.Sprintf("%s/sessions/%d", fx.url, sessionID))
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfRe.FindSubmatch(b)
	if m == nil {
		return "", errors.New("no CSRF token on the session page")
	}
	return string(m[1]), nil
}

// answer posts the owner's click on the question's first option, as htmx
// does; it must answer 200.
func (fx *fixture) answer(sessionID, questionID int64, csrf string) error {
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/sessions/%d/questions/%d/answer", fx.url, sessionID, questionID),
		strings.NewReader(url.Values{"option": {"0"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", csrf)
	res, err := fx.owner.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("answer: HTTP %d", res.StatusCode)
	}
	return nil
}

// askOwner calls ask_owner and returns the status it ended with.
func (fx *fixture) askOwner(token string, args map[string]any) (string, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fx.seq.Add(1), "method": "tools/call",
		"params": map[string]any{"name": "ask_owner", "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, fx.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := fx.http.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	var out struct {
		Result struct {
			StructuredContent struct {
				Status string `json:"status"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Result.StructuredContent.Status == "" {
		return "", fmt.Errorf("ask_owner: HTTP %d: %.300s", res.StatusCode, b)
	}
	return out.Result.StructuredContent.Status, nil
}
