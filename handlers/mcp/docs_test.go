package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/handlers/mcp"
)

var (
	docExample = regexp.MustCompile("(?s)```sh\n(.*?)\n```\n\n```http\n(.*?)\n```")
	docHeader  = regexp.MustCompile(`-H '([^:]+): ([^']*)'`)
	docData    = regexp.MustCompile(`-d '([^']*)'`)
	docURL     = regexp.MustCompile(`curl -si (\S+)`)
	docExcerpt = regexp.MustCompile("(?s)<!-- tools/list: (\\w+) -->\n```json\n(.*?)\n```")
)

// TestDocsMatchReality replays every curl example of docs/mcp.md against a
// server configured with the documented base URL and compares the status
// line, the documented headers and the body.
func TestDocsMatchReality(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	const base = "http://localhost:8080"
	h := mcp.New(mcp.Options{Store: e.st, BaseURL: base})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/.well-known/oauth-protected-resource/mcp", h.ProtectedResourceMetadata())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	examples := docExample.FindAllStringSubmatch(string(doc), -1)
	if len(examples) != 5 {
		t.Fatalf("found %d examples in docs/mcp.md", len(examples))
	}
	for _, ex := range examples {
		cmd, want := ex[1], ex[2]
		url := strings.Replace(docURL.FindStringSubmatch(cmd)[1], base, srv.URL, 1)
		method, body := http.MethodGet, ""
		if m := docData.FindStringSubmatch(cmd); m != nil {
			method, body = http.MethodPost, m[1]
		}
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		for _, m := range docHeader.FindAllStringSubmatch(cmd, -1) {
			req.Header.Set(m[1], m[2])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()

		head, wantBody, _ := strings.Cut(want, "\n\n")
		lines := strings.Split(head, "\n")
		if status := "HTTP/1.1 " + resp.Status; status != lines[0] {
			t.Errorf("%s: status %q, doc says %q", body, status, lines[0])
		}
		for _, l := range lines[1:] {
			k, v, _ := strings.Cut(l, ": ")
			if g := resp.Header.Get(k); g != v {
				t.Errorf("%s: header %s = %q, doc says %q", body, k, g, v)
			}
		}
		if wantBody != "" && strings.TrimSpace(string(got)) != wantBody {
			t.Errorf("%s: body\n%s\ndoc says\n%s", body, got, wantBody)
		}
	}

	// The tools/list excerpt equals the live definition.
	_, rawTools := liveTools(t, e)
	excerpts := docExcerpt.FindAllStringSubmatch(string(doc), -1)
	if len(excerpts) == 0 {
		t.Fatal("no tools/list excerpt in docs/mcp.md")
	}
	for _, m := range excerpts {
		var live, documented any
		if err := json.Unmarshal(rawTools[m[1]], &live); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(m[2]), &documented); err != nil {
			t.Fatalf("excerpt %s: %v", m[1], err)
		}
		a, _ := json.Marshal(live)
		b, _ := json.Marshal(documented)
		if !bytes.Equal(a, b) {
			t.Errorf("docs excerpt of %s differs from tools/list:\n%s\n%s", m[1], a, b)
		}
	}
}
