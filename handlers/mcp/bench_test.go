package mcp_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// The in-process cost of a tool call through the real handler (the front,
// the SDK or the plain-call answer, tool, PostgreSQL; no network): time, bytes and allocations
// per call, for before/after figures of a change:
//
//	go test -run '^$' -bench 'ToolCall|ToolsList' -benchmem ./handlers/mcp/

// benchServe sends body(i) through the handler b.N times, in process, and
// fails on anything but a successful result.
func benchServe(b *testing.B, fe *fuzzEnv, body func(i int) string, auth string) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req := httptest.NewRequest(http.MethodPost, fe.e.mcpURL(), bytes.NewReader([]byte(body(i))))
		req.Host = req.URL.Host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		fe.e.h.ServeHTTP(rec, req)
		if rec.Code != 200 || bytes.Contains(rec.Body.Bytes(), []byte(`"isError":true`)) || bytes.Contains(rec.Body.Bytes(), []byte(`"error":{`)) {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	}
}

func BenchmarkToolsListAnonymous(b *testing.B) {
	fe := newFuzzEnv(b)
	benchServe(b, fe, func(int) string { return `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` }, "")
}

// BenchmarkToolCall is one call of each hot tool an agent makes.
func BenchmarkToolCall(b *testing.B) {
	b.Run("set_status", func(b *testing.B) {
		fe := newFuzzEnv(b)
		benchServe(b, fe, func(i int) string {
			return toolCall(1, "set_status", map[string]any{"task": "step " + strconv.Itoa(i), "repo": "osfoundry", "branch": "main"})
		}, "Bearer "+fe.agent.token)
	})
	b.Run("post_session_note", func(b *testing.B) {
		fe := newFuzzEnv(b)
		benchServe(b, fe, func(i int) string {
			return toolCall(1, "post_session_note", with(ref(fe.sess), "subject", "Progress", "body", "Note "+strconv.Itoa(i), "idempotency_key", "bench-"+strconv.Itoa(i)))
		}, "Bearer "+fe.agent.token)
	})
	b.Run("read_session_mail", func(b *testing.B) {
		fe := newFuzzEnv(b)
		fe.seedMail(b, 30)
		body := toolCall(1, "read_session_mail", with(ref(fe.sess), "limit", 10))
		benchServe(b, fe, func(int) string { return body }, "Bearer "+fe.agent.token)
	})
}

// seedMail posts n notes as the agent.
func (fe *fuzzEnv) seedMail(b *testing.B, n int) {
	for i := range n {
		if _, _, err := fe.e.st.PostAgentNote(fe.e.ctx, store.AgentNote{WorkspaceID: fe.sess.WorkspaceID, ConnectionID: fe.agent.conn.ID,
			SessionType: fe.sess.Type, SessionID: fe.sess.PublicID, Subject: "s", Body: "b", IdempotencyKey: "seed-" + strconv.Itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadSessionMailParallel(b *testing.B) {
	fe := newFuzzEnv(b)
	fe.seedMail(b, 30)
	body := toolCall(1, "read_session_mail", with(ref(fe.sess), "limit", 10))
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, fe.e.mcpURL(), bytes.NewReader([]byte(body)))
			req.Host = req.URL.Host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+fe.agent.token)
			rec := httptest.NewRecorder()
			fe.e.h.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Errorf("%d", rec.Code)
				return
			}
		}
	})
}
