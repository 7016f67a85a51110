package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/oauth2"
)

// revokedError says the server no longer accepts this checkout's grant.
type revokedError struct{ Server string }

func (e *revokedError) Error() string {
	return fmt.Sprintf("this checkout's connection to %s was revoked; run `osfoundry agent login --server %s` again", e.Server, e.Server)
}

type unreachableError struct {
	Server string
	Err    error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the osFoundry server at %s: %v", e.Server, e.Err)
}

func (e *unreachableError) Unwrap() error { return e.Err }

const userAgent = "osfoundry-agent/1"

// newHTTPClient never follows redirects: a bearer token goes to the
// configured server only.
func newHTTPClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// client calls one account's server, refreshing the access token under the
// account's lock, which the server's refresh token rotation needs.
type client struct {
	acct account
	http *http.Client
	now  func() time.Time

	mu    sync.Mutex // guards creds; held through a refresh
	creds *credentials
}

func newClient(acct account) (*client, error) {
	creds, err := acct.load()
	if err != nil {
		return nil, err
	}
	return &client{acct: acct, http: newHTTPClient(), creds: creds, now: time.Now}, nil
}

// token returns an access token with some life left, other than refused.
// Whoever gets the lock second re-reads the pair the first one saved.
func (c *client) token(ctx context.Context, refused string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if refused == "" && c.creds.fresh(c.now()) {
		return c.creds.AccessToken, nil
	}
	unlock, err := lockFile(ctx, c.acct.lockPath())
	if err != nil {
		return "", fmt.Errorf("wait for the credentials lock: %w", err)
	}
	defer unlock()
	disk, err := c.acct.load()
	if err != nil {
		return "", err
	}
	c.creds = disk
	if disk.fresh(c.now()) && disk.AccessToken != refused {
		return disk.AccessToken, nil
	}
	if err := c.refresh(ctx); err != nil {
		return "", err
	}
	return c.creds.AccessToken, nil
}

// refresh saves the new pair at once; the caller holds c.mu and the lock.
func (c *client) refresh(ctx context.Context) error {
	if c.creds.RefreshToken == "" {
		return &revokedError{Server: c.acct.server}
	}
	conf := oauthConfig(c.creds.ClientID, "", "", c.creds.TokenEndpoint)
	tok, err := conf.TokenSource(tokenContext(ctx, c.http), &oauth2.Token{RefreshToken: c.creds.RefreshToken}).Token()
	if err != nil {
		return tokenError(c.acct.server, err)
	}
	c.creds.apply(tok, c.now())
	return c.acct.save(c.creds)
}

type reply struct {
	status int
	header http.Header
	// msgs: one for a JSON answer, any number for an event stream, none for 202.
	msgs []json.RawMessage
}

const maxReplyBytes = 32 << 20

// post sends one JSON-RPC body to /mcp; token and version may be empty.
func (c *client) post(ctx context.Context, token, version string, body []byte) (*reply, error) {
	return postMCP(ctx, c.http, c.acct.server, c.resource(), token, version, body, nil)
}

func (c *client) resource() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creds.Resource
}

// postMCP posts body and reads the answer. With notify set, notifications
// before the result (a waiting call's progress) go to it as they arrive.
func postMCP(ctx context.Context, hc *http.Client, server, endpoint, token, version string, body []byte, notify func(json.RawMessage)) (*reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("User-Agent", userAgent)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, &unreachableError{Server: server, Err: err}
	}
	defer res.Body.Close()
	r := &reply{status: res.StatusCode, header: res.Header}
	ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		r.msgs, err = readEvents(io.LimitReader(res.Body, maxReplyBytes), notify)
	case "application/json":
		var b []byte
		b, err = io.ReadAll(io.LimitReader(res.Body, maxReplyBytes))
		if len(bytes.TrimSpace(b)) > 0 && json.Valid(b) {
			r.msgs = []json.RawMessage{b}
		}
	default:
		_, err = io.Copy(io.Discard, io.LimitReader(res.Body, maxReplyBytes))
	}
	if err != nil {
		return nil, &unreachableError{Server: server, Err: err}
	}
	return r, nil
}

// readEvents returns the JSON data of each server-sent event.
func readEvents(r io.Reader, notify func(json.RawMessage)) ([]json.RawMessage, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReplyBytes)
	var msgs []json.RawMessage
	var data []byte
	flush := func() {
		if d := bytes.TrimSpace(data); len(d) > 0 && json.Valid(d) {
			msg := append(json.RawMessage(nil), d...)
			if notify != nil && isNotification(msg) {
				notify(msg)
			} else {
				msgs = append(msgs, msg)
			}
		}
		data = data[:0]
	}
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
	}
	flush()
	return msgs, sc.Err()
}

func isNotification(msg json.RawMessage) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method != "" && len(m.ID) == 0
}

type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

func (r *toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (r *toolResult) decode(v any) error {
	if len(r.StructuredContent) == 0 {
		return errors.New("tool result has no structured content")
	}
	return json.Unmarshal(r.StructuredContent, v)
}

// unreadHint is in every tool result of a connection with unread mail.
type unreadHint struct {
	Total    int             `json:"total"`
	Sessions []unreadSession `json:"sessions"`
}

type unreadSession struct {
	SessionType string `json:"session_type"`
	SessionID   string `json:"session_id"`
	Count       int    `json:"count"`
}

func (r *toolResult) unread() *unreadHint {
	var v struct {
		Unread *unreadHint `json:"unread"`
	}
	if len(r.StructuredContent) == 0 || json.Unmarshal(r.StructuredContent, &v) != nil || v.Unread == nil || v.Unread.Total <= 0 {
		return nil
	}
	return v.Unread
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// callTool calls one tool; a refused token is replaced once, and a second
// refusal means the grant is gone.
func (c *client) callTool(ctx context.Context, name string, args any) (*toolResult, error) {
	if args == nil {
		args = struct{}{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		return nil, err
	}
	tok, err := c.token(ctx, "")
	if err != nil {
		return nil, err
	}
	rep, err := c.post(ctx, tok, "", body)
	if err != nil {
		return nil, err
	}
	if rep.status == http.StatusUnauthorized {
		if tok, err = c.token(ctx, tok); err != nil {
			return nil, err
		}
		if rep, err = c.post(ctx, tok, "", body); err != nil {
			return nil, err
		}
		if rep.status == http.StatusUnauthorized {
			return nil, &revokedError{Server: c.acct.server}
		}
	}
	for _, m := range rep.msgs {
		var msg rpcMessage
		if json.Unmarshal(m, &msg) != nil || string(msg.ID) != "1" {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("%s: %s", name, msg.Error.Message)
		}
		var res toolResult
		if err := json.Unmarshal(msg.Result, &res); err != nil {
			return nil, fmt.Errorf("%s: undecodable result: %w", name, err)
		}
		return &res, nil
	}
	return nil, fmt.Errorf("%s: the server answered HTTP %d without a result", name, rep.status)
}

// truncate cuts s to at most n bytes on a character boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
