package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
)

// fixture is the prepared data: a workspace with one project, sessions, and
// one connection (token, claimed profile, invitation) per worker; and the
// clients that reach the server and its database.
type fixture struct {
	url         string
	http        *http.Client
	pool        *pgxpool.Pool // the physical scenarios' own
	workspaceID int64
	sessions    []*store.Session
	// physical are the sessions the physical note insert writes to: no
	// agent is invited there, so its rows do not add to what the tools read
	// and count (one scenario must not change another's cost).
	physical   []*store.Session
	agents     []agent
	owner      *http.Client
	pollURL    string
	metricsURL string // the server's /metrics, when known
	// physicalURL is the physical HTTP round trip's server (physical_http.go),
	// physicalCallURL its physical tool calls' (physical_call.go).
	physicalURL, physicalCallURL string
	// answerBytes is each tool's answer size, as worker 0 got it.
	answerBytes map[string]int
	// tail asks the physical calls for their phases, kept in phases (tail.go).
	tail   bool
	phases phaseLog
	// sdkURL is the server whose MCP SDK answers every request
	// (--mcp-sdk-only), on the same database, when the bench started one.
	sdkURL string
	// ownerSlug is the owner's sender slug, which reply_to_sender answers.
	ownerSlug string
	runID     string
	seq       atomic.Int64
	// search is the search scenarios' workspace (search.go), when asked for.
	search *searchFixture
}

type agent struct {
	connectionID int64
	token        string
	slug         string
}

// maxWorkers bounds the concurrency of a step.
const maxWorkers = 256

func prepare(ctx context.Context, st *store.Store, o options) (*fixture, error) {
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	email := "bench-" + runID + "@example.com"
	password := "bench password " + runID
	owner, err := st.CreateOwner(ctx, store.NewOwner{Email: email, DisplayName: "Bench owner", Password: password, WorkspaceName: "bench-" + runID})
	if err != nil {
		return nil, err
	}
	project, err := st.CreateProject(ctx, owner.WorkspaceID, "Bench")
	if err != nil {
		return nil, err
	}
	if err := st.SetProjectWriteLimits(ctx, owner.WorkspaceID, project.ID, benchWriteLimits); err != nil {
		return nil, err
	}
	fx := &fixture{url: o.url, workspaceID: owner.WorkspaceID, runID: runID, ownerSlug: store.OwnerSlug(owner.ID),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: maxWorkers, MaxConnsPerHost: 0}, Timeout: 30 * time.Second}}
	for i := range o.sessions {
		s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: owner.WorkspaceID, ProjectID: project.ID, Type: "team_session", Title: fmt.Sprintf("Bench %d", i), CreatedBy: owner.ID})
		if err != nil {
			return nil, err
		}
		fx.sessions = append(fx.sessions, s)
		p, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: owner.WorkspaceID, ProjectID: project.ID, Type: "team_session", Title: fmt.Sprintf("Physical %d", i), CreatedBy: owner.ID})
		if err != nil {
			return nil, err
		}
		fx.physical = append(fx.physical, p)
	}
	workers := 0
	for _, c := range o.levels {
		workers = max(workers, c)
	}
	for i := range workers {
		conn, token, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: owner.WorkspaceID, OwnerID: owner.ID,
			ClientName: "bench", Scopes: store.AllScopes, ProjectIDs: []int64{project.ID}}, o.url+"/mcp", time.Hour)
		if err != nil {
			return nil, err
		}
		p, err := st.ClaimProfile(ctx, owner.WorkspaceID, conn.ID, fmt.Sprintf("bench-%d", i), fmt.Sprintf("Bench agent %d", i))
		if err != nil {
			return nil, err
		}
		for _, s := range fx.sessions {
			if err := st.Invite(ctx, owner.WorkspaceID, s.ID, conn.ID, store.RoleContributor); err != nil {
				return nil, err
			}
		}
		fx.agents = append(fx.agents, agent{connectionID: conn.ID, token: token, slug: p.SenderSlug})
	}
	// Mail to read: 30 notes in each session.
	for i := range 30 {
		for j, s := range fx.sessions {
			a := fx.agents[i%len(fx.agents)]
			if _, _, err := st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: owner.WorkspaceID, ConnectionID: a.connectionID,
				SessionType: s.Type, SessionID: s.PublicID, Subject: fmt.Sprintf("Seed %d", i), Body: "Seed body", IdempotencyKey: fmt.Sprintf("seed-%d-%d", i, j)}); err != nil {
				return nil, err
			}
		}
	}
	if err := fx.signIn(email, password); err != nil {
		return nil, fmt.Errorf("owner sign-in: %w", err)
	}
	return fx, nil
}

// typicalAnswer sizes the answer of each tool an agent calls in a loop, as
// worker 0 gets it (the size its physical call writes), and returns the
// median: the size of the physical HTTP round trip's fixed result.
func (fx *fixture) typicalAnswer() (int, error) {
	fx.answerBytes = map[string]int{}
	var sizes []int
	for _, t := range fx.tools() {
		n, err := fx.post(fx.url+"/mcp", fx.agents[0].token, "tools/call", map[string]any{"name": t.tool(), "arguments": t.args(0, 0)})
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t.name, err)
		}
		fx.answerBytes[t.name] = n
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	return sizes[len(sizes)/2], nil
}

// session is the session worker w works in.
func (fx *fixture) session(w int) *store.Session { return fx.sessions[w%len(fx.sessions)] }

// key is a new idempotency key.
func (fx *fixture) key(prefix string) string {
	return prefix + "-" + fx.runID + "-" + strconv.FormatInt(fx.seq.Add(1), 10)
}

var csrfRe = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn gets an owner cookie and finds the session page's poll URL.
func (fx *fixture) signIn(email, password string) error {
	c, err := fx.login(email, password)
	if err != nil {
		return err
	}
	fx.owner = c
	return fx.loadPollURL()
}

// login signs an owner in and returns the client that holds the cookie.
func (fx *fixture) login(email, password string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: fx.http.Transport, Timeout: 30 * time.Second}
	res, err := c.Get(fx.url + "/login")
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfRe.FindSubmatch(b)
	if m == nil {
		return nil, errors.New("no CSRF token on /login")
	}
	res, err = c.PostForm(fx.url+"/login", url.Values{"_csrf": {string(m[1])}, "email": {email}, "password": {password}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	return c, nil
}

var pollRe = regexp.MustCompile(`hx-get="(/sessions/[^"]*poll[^"]*)"`)

// loadPollURL opens the session page as the owner's browser does and takes
// its poll URL (an hx-get attribute carrying the newest note id shown), so
// that the polls that follow are "unchanged" ones; none found leaves it
// empty, and the poll scenarios out.
func (fx *fixture) loadPollURL() error {
	res, err := fx.owner.Get(fmt.Sprintf("%s/sessions/%d", fx.url, fx.sessions[0].ID))
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fx.pollURL = ""
	if pm := pollRe.FindSubmatch(b); pm != nil {
		fx.pollURL = fx.url + strings.ReplaceAll(string(pm[1]), "&amp;", "&")
	}
	return nil
}

// tool calls an MCP tool as worker w, on the server at base.
func (fx *fixture) tool(base string, w int, name string, args map[string]any) error {
	return fx.rpc(base, fx.agents[w].token, "tools/call", map[string]any{"name": name, "arguments": args})
}

// rpc posts one JSON-RPC request to base's /mcp; anything but a success is
// an error.
func (fx *fixture) rpc(base, token, method string, params any) error {
	_, err := fx.post(base+"/mcp", token, method, params)
	return err
}

// post posts one JSON-RPC request as a client of /mcp does, to url, and
// returns the size of the answer; anything but a success is an error.
func (fx *fixture) post(url, token, method string, params any) (int, error) {
	n, _, err := fx.postHeader(url, token, method, params, nil)
	return n, err
}

// postHeader is post with more request headers, returning the answer's.
func (fx *fixture) postHeader(url, token, method string, params any, more http.Header) (int, http.Header, error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": fx.seq.Add(1), "method": method}
	if params != nil {
		msg["params"] = params
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method != "initialize" {
		// A client names the version initialize agreed on in every later request.
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range more {
		req.Header[k] = v
	}
	res, err := fx.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return 0, nil, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("HTTP %d: %.200s", res.StatusCode, b)
	}
	if err := refusal(b); err != nil {
		return 0, nil, err
	}
	if bytes.Contains(b, []byte(`"isError":true`)) || bytes.Contains(b, []byte(`"error":{`)) {
		return 0, nil, fmt.Errorf("tool error: %.300s", b)
	}
	return len(b), res.Header, nil
}

// poll is the owner's unchanged Team mail poll: it must answer 204.
func (fx *fixture) poll() error {
	res, err := fx.owner.Get(fx.pollURL)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("poll answered %d, want 204", res.StatusCode)
	}
	return nil
}
