package handlers

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// testApp is the real router on a fresh database behind a real HTTP server.
type testApp struct {
	t     *testing.T
	store *store.Store
	srv   *httptest.Server
	h     *Server
}

// requestStatements counts the statements the app's store has sent for
// requests (not the listener's or other background work, such as its sweep).
func (a *testApp) requestStatements() uint64 { return a.store.StatementCounts().Request }

// newTestApp starts the app; tune changes its configuration first.
func newTestApp(t *testing.T, tune ...func(*Config)) *testApp {
	t.Helper()
	st := storetest.New(t)
	// The fixtures post agents' notes as fast as they go (agentNote): a
	// minute of the write limits lasts a millisecond here; the limits
	// themselves are the MCP tests' (handlers/mcp/limits_test.go).
	st.SetWriteMinute(time.Millisecond)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	listener, mail := runListener(t, st, quiet)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	cfg := Config{BaseURL: base, SessionHashKey: []byte(strings.Repeat("k", 64)), SessionBlockKey: []byte(strings.Repeat("b", 32))}
	for _, f := range tune {
		f(&cfg)
	}
	h := New(Deps{
		Store:    st,
		Listener: listener,
		Mail:     mail,
		Logger:   quiet,
		Config:   cfg,
	})
	srv.Config.Handler = h.Handler()
	srv.Start()
	// Streams end first: the server's Close waits for every request.
	t.Cleanup(func() { h.CloseStreams(); srv.Close() })
	return &testApp{t: t, store: st, srv: srv, h: h}
}

// client is a browser-like HTTP client with a cookie jar that does not follow redirects.
type client struct {
	t    *testing.T
	app  *testApp
	http *http.Client
}

func (a *testApp) client() *client { return a.clientFrom("") }

// clientFrom is a client whose connections come from the loopback address
// ip (like 127.0.0.2: another client address, as the server sees it), or
// any address when ip is "".
func (a *testApp) clientFrom(ip string) *client {
	jar, _ := cookiejar.New(nil)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if ip != "" {
		tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext
	}
	a.t.Cleanup(tr.CloseIdleConnections)
	return &client{t: a.t, app: a, http: &http.Client{Jar: jar, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (c *client) do(req *http.Request) (*http.Response, string) {
	c.t.Helper()
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	return res, string(readBody(res))
}

// readBody reads a response whole, or for an event stream (which never
// ends by itself) what arrives within 300 ms.
func readBody(res *http.Response) []byte {
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t := time.AfterFunc(300*time.Millisecond, func() { res.Body.Close() })
		defer t.Stop()
	}
	b, _ := io.ReadAll(res.Body)
	return b
}

func (c *client) get(path string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.app.srv.URL+path, nil)
	return c.do(req)
}

var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// csrf fetches a page and returns the CSRF token of its forms.
func (c *client) csrf(path string) string {
	c.t.Helper()
	_, body := c.get(path)
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		c.t.Fatalf("no CSRF token on %s", path)
	}
	return m[1]
}

// post submits a form (add "_csrf" yourself, or not, to test refusal).
func (c *client) post(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.app.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}
