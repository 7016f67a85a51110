package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

// calls are the measured calls: every tool of the heavy agent (and two of
// the light one's), and the owner's pages.
func (sf *scaleFixture) calls(ctx context.Context, fx *fixture, st *store.Store) ([]scaleCall, error) {
	m := &sf.measured
	busy, quiet := m.busy, m.quiet
	ref := func(s *store.Session) map[string]any {
		return map[string]any{"session_type": s.Type, "session_id": s.PublicID}
	}
	with := func(s *store.Session, kv ...any) map[string]any {
		args := ref(s)
		for i := 0; i+1 < len(kv); i += 2 {
			args[kv[i].(string)] = kv[i+1]
		}
		return args
	}
	tool := func(a agent, name string, args func(i int) map[string]any) func(i int) error {
		return func(i int) error {
			return fx.rpc(fx.url, a.token, "tools/call", map[string]any{"name": name, "arguments": args(i)})
		}
	}
	fixed := func(args map[string]any) func(int) map[string]any { return func(int) map[string]any { return args } }
	retryKey := "scale-retry-" + sf.runID
	ownerSlug := store.OwnerSlug(m.ownerID)
	out := []scaleCall{
		{name: "set_status", call: tool(m.heavy, "set_status", func(i int) map[string]any {
			return map[string]any{"task": fmt.Sprintf("scale step %d", i), "repo": "osfoundry", "branch": "main"}
		})},
		{name: "post_session_note", writes: true, call: tool(m.heavy, "post_session_note", func(i int) map[string]any {
			return with(busy, "subject", "Progress", "body", fmt.Sprintf("Scale note %d", i), "idempotency_key", fx.key("scale"))
		})},
		{name: "post_session_note retry", writes: true, call: tool(m.heavy, "post_session_note", fixed(with(busy, "subject", "Retry", "body", "The same note", "idempotency_key", retryKey)))},
		{name: "reply_to_sender", writes: true, call: tool(m.heavy, "reply_to_sender", func(i int) map[string]any {
			return with(busy, "to", ownerSlug, "subject", "Re", "body", fmt.Sprintf("Scale reply %d", i), "idempotency_key", fx.key("scale-r"))
		})},
		{name: "claim_connected_profile", call: tool(m.heavy, "claim_connected_profile", fixed(map[string]any{"handle": m.heavyHandle, "display_name": "Scale agent 0.0"}))},
		{name: "read_session_mail (busy session)", call: tool(m.heavy, "read_session_mail", fixed(with(busy, "limit", 10)))},
		{name: "read_session_mail (quiet session)", call: tool(m.heavy, "read_session_mail", fixed(with(quiet, "limit", 10)))},
		{name: "list_agents", call: tool(m.heavy, "list_agents", fixed(map[string]any{}))},
		{name: "list_sessions", call: tool(m.heavy, "list_sessions", fixed(map[string]any{}))},
		{name: "read_session_state", call: tool(m.heavy, "read_session_state", fixed(ref(busy)))},
		{name: "poll_resource_events", call: tool(m.heavy, "poll_resource_events", fixed(map[string]any{"resource_type": busy.Type, "resource_id": busy.PublicID,
			"after_sequence": 0, "limit": 10}))},
		{name: "set_status (agent invited to 5 sessions)", call: tool(m.light, "set_status", func(i int) map[string]any {
			return map[string]any{"task": fmt.Sprintf("scale step %d", i)}
		})},
		{name: "read_session_mail (agent invited to 5 sessions)", call: tool(m.light, "read_session_mail", fixed(with(busy, "limit", 10)))},
		{name: "tools/list (anonymous)", call: func(int) error { return fx.rpc(fx.url, "", "tools/list", map[string]any{}) }},
		{name: "initialize (anonymous)", call: func(int) error { return fx.rpc(fx.url, "", "initialize", initializeParams) }},
	}
	page := func(path string) func(int) error {
		return func(int) error { return sf.get(fx.url+path, http.StatusOK) }
	}
	var pollURL string
	loadPoll := func() error {
		u, _, err := sf.sessionPage(fx, busy.ID)
		pollURL = u
		return err
	}
	out = append(out,
		scaleCall{name: "page: projects list /", call: page("/")},
		scaleCall{name: "page: project", call: page(fmt.Sprintf("/projects/%d", busy.ProjectID))},
		scaleCall{name: "page: session (busy)", call: page(fmt.Sprintf("/sessions/%d", busy.ID))},
		scaleCall{name: "page: session (quiet)", call: page(fmt.Sprintf("/sessions/%d", quiet.ID))},
		scaleCall{name: "page: poll, unchanged", before: func() error {
			if pollURL == "" {
				return loadPoll()
			}
			return nil
		}, call: func(int) error { return sf.get(pollURL, http.StatusNoContent) }},
	)
	// The poll after a receipt: before each, the owner writes a note to the
	// whole session and the reader reads it (its first receipt on it,
	// announced); the poll carries the newest note and the receipts cursor
	// from before the read, so that it answers the receipt alone.
	var receiptURL string
	out = append(out, scaleCall{name: "page: poll after a receipt", before: func() error {
		newestReceipt, err := testfactory.NewestOwnerReceipt(ctx, fx.pool, busy.ID)
		if err != nil {
			return err
		}
		n, _, err := st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: m.workspaceID, SessionID: busy.ID, OwnerID: m.ownerID,
			Type: store.MessageNote, Subject: "To everyone", Body: "Owner's note " + fx.key("receipt")})
		if err != nil {
			return err
		}
		receiptURL = fmt.Sprintf("%s/sessions/%d/mail/poll?after=%d&receipts=%d", fx.url, busy.ID, n.ID, newestReceipt)
		_, _, err = st.ReadAgentMail(ctx, m.workspaceID, m.reader, busy.Type, busy.PublicID, n.ID+1, 1)
		return err
	}, call: func(int) error {
		err := sf.get(receiptURL, http.StatusOK)
		if err != nil && strings.Contains(err.Error(), "answered 204") {
			return errRetry // the receipt's notification has not reached the server yet
		}
		return err
	}})
	out = append(out,
		scaleCall{name: "page: unread stream, first event", call: func(int) error { return sf.firstEvent(fx, "/unread/stream", "unread") }},
		scaleCall{name: "page: busy session's stream, opened", call: func(int) error {
			return sf.firstEvent(fx, fmt.Sprintf("/sessions/%d/stream", busy.ID), "unread")
		}},
	)
	var csrf string
	var after int64
	out = append(out, scaleCall{name: "page: owner's note post", before: func() error {
		var err error
		_, csrf, err = sf.sessionPage(fx, busy.ID)
		if err != nil {
			return err
		}
		newest, err := st.ListSessionMail(ctx, m.workspaceID, busy.ID, 0, 1)
		if err != nil || len(newest) == 0 {
			return errors.Join(err, errors.New("the busy session has no notes"))
		}
		after = newest[0].ID
		return nil
	}, call: func(i int) error {
		form := url.Values{"_csrf": {csrf}, "type": {store.MessageNote}, "subject": {"Owner's note"},
			"body": {fmt.Sprintf("Scale owner note %d %s", i, fx.key("o"))}, "after": {strconv.FormatInt(after, 10)}}
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/sessions/%d/mail", fx.url, busy.ID), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		return sf.do(req, http.StatusOK)
	}})
	out = append(out,
		scaleCall{name: "page: inbox", call: page("/inbox")},
		scaleCall{name: "page: search", call: page("/search?" + url.Values{"q": {"w100 w7"}}.Encode())},
	)
	return out, nil
}

var csrfValueRe = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// sessionPage loads a session page as the owner and returns its poll URL
// and CSRF token.
func (sf *scaleFixture) sessionPage(fx *fixture, sessionID int64) (poll, csrf string, err error) {
	res, err := sf.measured.owner.Get(fmt.Sprintf("%s/sessions/%d", fx.url, sessionID))
	if err != nil {
		return "", "", err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("session page answered %d", res.StatusCode)
	}
	if m := pollRe.FindSubmatch(b); m != nil {
		poll = fx.url + strings.ReplaceAll(string(m[1]), "&amp;", "&")
	}
	if m := csrfValueRe.FindSubmatch(b); m != nil {
		csrf = string(m[1])
	}
	if poll == "" || csrf == "" {
		return "", "", errors.New("session page without its poll URL or CSRF token")
	}
	return poll, csrf, nil
}

// get fetches url as the owner and wants status.
func (sf *scaleFixture) get(url string, status int) error {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return sf.do(req, status)
}

func (sf *scaleFixture) do(req *http.Request, status int) error {
	res, err := sf.measured.owner.Do(req)
	if err != nil {
		return err
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err := pageRefusal(req.URL.Path, res.StatusCode); err != nil {
		return err
	}
	if res.StatusCode != status {
		return fmt.Errorf("%s %s answered %d, want %d", req.Method, req.URL.Path, res.StatusCode, status)
	}
	if status == http.StatusOK && n == 0 {
		return fmt.Errorf("%s answered an empty page", req.URL.Path)
	}
	return nil
}

// firstEvent opens a stream as the owner and returns once its first event
// of kind has arrived, then closes it.
func (sf *scaleFixture) firstEvent(fx *fixture, path, kind string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fx.url+path, nil)
	res, err := sf.measured.owner.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", path, res.StatusCode)
	}
	br := bufio.NewReader(res.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("%s: %w before an %s event", path, err, kind)
		}
		if strings.TrimSpace(line) == "event: "+kind {
			return nil
		}
	}
}
