package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// Helpers of the live stream tests: an event stream reader, MCP posts, and
// a second replica.

// sseMsg is one event read from a stream; a comment line reads as name ":".
type sseMsg struct {
	id, name, data string
}

// eventStream is an open text/event-stream response, read in the background.
type eventStream struct {
	t      *testing.T
	res    *http.Response
	msgs   chan sseMsg // closed when the stream ends
	cancel context.CancelFunc
}

// openEvents opens path as an event stream with the client's cookies; header
// pairs are added to the request. It fails unless the answer is a stream.
func (c *client) openEvents(path string, header ...string) *eventStream {
	c.t.Helper()
	s, res := c.tryEvents(path, header...)
	if s == nil {
		body, _ := io.ReadAll(res.Body)
		c.t.Fatalf("GET %s: status %d, %s, want an event stream: %s", path, res.StatusCode, res.Header.Get("Content-Type"), truncate(string(body)))
	}
	return s
}

// tryEvents is openEvents that returns the response when it is not a stream.
func (c *client) tryEvents(path string, header ...string) (*eventStream, *http.Response) {
	c.t.Helper()
	return c.tryEventsAt(c.app.srv.URL, path, header...)
}

func (c *client) tryEventsAt(base, path string, header ...string) (*eventStream, *http.Response) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.http.Do(req)
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		c.t.Cleanup(func() { res.Body.Close(); cancel() })
		return nil, res
	}
	s := &eventStream{t: c.t, res: res, msgs: make(chan sseMsg, 1000), cancel: cancel}
	c.t.Cleanup(s.close)
	go s.read()
	return s, res
}

func (s *eventStream) close() {
	s.cancel()
	s.res.Body.Close()
}

// read parses the stream into msgs until it ends.
func (s *eventStream) read() {
	defer close(s.msgs)
	r := bufio.NewReader(s.res.Body)
	var m sseMsg
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if m.name != "" || data != nil {
				m.data = strings.Join(data, "\n")
				s.msgs <- m
			}
			m, data = sseMsg{}, nil
		case strings.HasPrefix(line, ":"):
			s.msgs <- sseMsg{name: ":", data: line}
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			m.name = line[7:]
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(line[5:], " "))
		}
	}
}

// next returns the next event named name (others are skipped), failing
// after timeout or when the stream ends first.
func (s *eventStream) next(name string, timeout time.Duration) sseMsg {
	s.t.Helper()
	return s.await(fmt.Sprintf("%q event", name), timeout, func(m sseMsg) bool { return m.name == name })
}

// nextData returns the next event that is neither a comment nor presence.
func (s *eventStream) nextData(timeout time.Duration) sseMsg {
	s.t.Helper()
	return s.await("event", timeout, func(m sseMsg) bool { return m.name != ":" && m.name != "presence" })
}

// await returns the next event that matches (what names it), skipping the
// others, failing after timeout or when the stream ends first.
func (s *eventStream) await(what string, timeout time.Duration, match func(sseMsg) bool) sseMsg {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatalf("the stream ended while waiting for a %s", what)
			}
			if match(m) {
				return m
			}
		case <-deadline:
			s.t.Fatalf("no %s within %v", what, timeout)
		}
	}
}

// notes reads n note events and returns their ids in order.
func (s *eventStream) notes(n int, timeout time.Duration) []string {
	s.t.Helper()
	var ids []string
	for range n {
		ids = append(ids, s.next("note", timeout).id)
	}
	return ids
}

// ends waits (at most timeout) for the stream to end and returns the events
// read meanwhile.
func (s *eventStream) ends(timeout time.Duration) []sseMsg {
	s.t.Helper()
	var got []sseMsg
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				return got
			}
			got = append(got, m)
		case <-deadline:
			s.t.Fatalf("the stream is still open after %v (read %d events)", timeout, len(got))
		}
	}
}

// quiet fails when a note event arrives within d.
func (s *eventStream) quiet(d time.Duration) {
	s.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-s.msgs:
			if ok && m.name == "note" {
				s.t.Fatalf("unexpected note event %s", m.id)
			}
			if !ok {
				return
			}
		case <-deadline:
			return
		}
	}
}

// waitStreams waits (at most 5 s) until the replica holds n streams of the session.
func (a *testApp) waitStreams(sessionID int64, n int) {
	a.t.Helper()
	for range 500 {
		if a.h.live.Count(sessionID) == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.t.Fatalf("%d streams of session %d, want %d", a.h.live.Count(sessionID), sessionID, n)
}

// postOverMCP posts a note with post_session_note through base's /mcp and
// returns its id.
func postOverMCP(t *testing.T, base string, ag agent, session *store.Session, subject, body, key string) int64 {
	t.Helper()
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "post_session_note", "arguments": map[string]any{"session_type": session.Type, "session_id": session.PublicID,
			"subject": subject, "body": body, "idempotency_key": key}}})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+ag.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				ID int64 `json:"id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Result.IsError || out.Result.StructuredContent.ID == 0 {
		t.Fatalf("post_session_note through %s: %s", base, b)
	}
	return out.Result.StructuredContent.ID
}

// replica is a second server on the same database, with its own listener,
// its own streams and the same cookie keys.
func (a *testApp) replica() (*Server, *httptest.Server) {
	a.t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	listener, mail := runListener(a.t, a.store, quiet)
	srv := httptest.NewUnstartedServer(nil)
	h := New(Deps{Store: a.store, Listener: listener, Mail: mail, Logger: quiet,
		Config: Config{BaseURL: "http://" + srv.Listener.Addr().String(), SessionHashKey: []byte(strings.Repeat("k", 64)), SessionBlockKey: []byte(strings.Repeat("b", 32))}})
	srv.Config.Handler = h.Handler()
	srv.Start()
	a.t.Cleanup(func() { h.CloseStreams(); srv.Close() })
	return h, srv
}
