package mcp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSDKTrivialTool is the MCP SDK's own cost of one tools/call in
// stateless JSON mode, the way this server runs it, with a tool that does
// nothing but answer: no token, no database, no schema. What a tool call
// costs beyond it is ours.
//
//	go test -run '^$' -bench SDKTrivialTool -benchmem ./handlers/mcp/
func BenchmarkSDKTrivialTool(b *testing.B) {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil)
	srv.AddTool(&mcpsdk.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: `{"ok":true}`}}}, nil
		})
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv },
		&mcpsdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":{"a":"b"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
