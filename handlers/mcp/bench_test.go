package mcp_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// benchServe runs body through the handler b.N times, in process.
func benchServe(b *testing.B, fe *fuzzEnv, body, auth string) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, fe.e.mcpURL(), bytes.NewReader([]byte(body)))
		req.Host = req.URL.Host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		fe.e.h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	}
}

func BenchmarkToolsListAnonymous(b *testing.B) {
	fe := newFuzzEnv(b)
	benchServe(b, fe, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "")
}

func BenchmarkReadSessionMail(b *testing.B) {
	fe := newFuzzEnv(b)
	for i := range 30 {
		if _, _, err := fe.e.st.PostAgentNote(fe.e.ctx, store.AgentNote{WorkspaceID: fe.sess.WorkspaceID, ConnectionID: fe.agent.conn.ID,
			SessionType: fe.sess.Type, SessionID: fe.sess.PublicID, Subject: "s", Body: "b", IdempotencyKey: string(rune('a' + i))}); err != nil {
			b.Fatal(err)
		}
	}
	benchServe(b, fe, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_session_mail","arguments":{"session_type":"agent_session","session_id":"`+fe.sess.PublicID+`","limit":10}}}`, "Bearer "+fe.agent.token)
}

func BenchmarkReadSessionMailParallel(b *testing.B) {
	fe := newFuzzEnv(b)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_session_mail","arguments":{"session_type":"agent_session","session_id":"` + fe.sess.PublicID + `","limit":10}}}`
	b.ReportAllocs()
	b.SetParallelism(4)
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
				b.Fatalf("%d", rec.Code)
			}
		}
	})
}
