package handlers

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/handlers/inbound"
)

// TestBodyLimitIsOneLimit: the app's cap on a request body and the MCP
// front's are the same, inbound.MaxBodyBytes: an MCP body just under it
// reaches the MCP front, which reads it; one byte over is refused.
func TestBodyLimitIsOneLimit(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.client()
	post := func(size int) int {
		t.Helper()
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"`
		body := msg + strings.Repeat("x", size-len(msg)-len(`"}}}`)) + `"}}}`
		req, _ := http.NewRequest(http.MethodPost, app.srv.URL+"/mcp", bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := post(inbound.MaxBodyBytes - 10); got != http.StatusOK {
		t.Errorf("a body of %d bytes: %d, want 200", inbound.MaxBodyBytes-10, got)
	}
	if got := post(inbound.MaxBodyBytes + 1); got != http.StatusRequestEntityTooLarge {
		t.Errorf("a body of %d bytes: %d, want 413", inbound.MaxBodyBytes+1, got)
	}
}
