package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// world is a workspace with a project, a session and invited agents, written
// straight into the database the replicas use.
type world struct {
	st      *store.Store
	owner   *store.Owner
	session *store.Session
	tokens  []string
}

func newWorld(t *testing.T, dsn, baseURL string, agents int) *world {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	w := &world{st: st}
	w.owner, err = st.CreateOwner(ctx, store.NewOwner{Email: fmt.Sprintf("o%d@example.com", time.Now().UnixNano()), DisplayName: "O", Password: "long enough password", WorkspaceName: fmt.Sprint(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, w.owner.WorkspaceID, "P")
	if err != nil {
		t.Fatal(err)
	}
	w.session, err = st.CreateSession(ctx, store.NewSession{WorkspaceID: w.owner.WorkspaceID, ProjectID: p.ID, Type: "team_session", Title: "S"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range agents {
		c, tok, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, ClientName: "c", Scopes: store.AllScopes, ProjectIDs: []int64{p.ID}}, baseURL+"/mcp", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ClaimProfile(ctx, w.owner.WorkspaceID, c.ID, fmt.Sprintf("agent-%d", i), "Agent"); err != nil {
			t.Fatal(err)
		}
		if err := st.Invite(ctx, w.owner.WorkspaceID, w.session.ID, c.ID, store.RoleContributor); err != nil {
			t.Fatal(err)
		}
		w.tokens = append(w.tokens, tok)
	}
	return w
}

// toolReply is what the raw client makes of an answer.
type toolReply struct {
	status  int
	isError bool
	rpcErr  string
	data    map[string]any
	text    string
}

var rpcSeq atomic.Int64

// callTool posts one JSON-RPC tools/call with a short timeout.
func callTool(base, token, name string, args any) (*toolReply, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rpcSeq.Add(1), "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result struct {
			IsError           bool             `json:"isError"`
			StructuredContent map[string]any   `json:"structuredContent"`
			Content           []map[string]any `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	r := &toolReply{status: res.StatusCode}
	if err := json.Unmarshal(b, &msg); err != nil {
		return r, fmt.Errorf("HTTP %d, undecodable body %q", res.StatusCode, b)
	}
	if msg.Error != nil {
		r.rpcErr = msg.Error.Message
	}
	r.isError = msg.Result.IsError
	r.data = msg.Result.StructuredContent
	if len(msg.Result.Content) > 0 {
		r.text, _ = msg.Result.Content[0]["text"].(string)
	}
	if r.data == nil && r.text != "" {
		_ = json.Unmarshal([]byte(r.text), &r.data)
	}
	return r, nil
}

func (w *world) note(subject, body, key string) map[string]any {
	return map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID, "subject": subject, "body": body, "idempotency_key": key}
}

// replicaPair is two replicas on one fresh database that share the public
// URL base (a free loopback address nothing listens on until proxy is
// called), with a world in that database.
type replicaPair struct {
	dsn, addr, base string
	a, b            *replica
	w               *world
}

// startReplicaPair starts both replicas with start (startReplica, or a
// variant), waits until both are ready, and makes a world with agents agents.
func startReplicaPair(t *testing.T, agents int, start func(t *testing.T, dsn, baseURL string, extra ...string) *replica) *replicaPair {
	t.Helper()
	p := &replicaPair{dsn: storetest.NewDatabase(t), addr: freePort(t)}
	p.base = "http://" + p.addr
	p.a = start(t, p.dsn, p.base)
	p.b = start(t, p.dsn, p.base)
	p.a.waitReady()
	p.b.waitReady()
	p.w = newWorld(t, p.dsn, p.base, agents)
	return p
}

// proxy serves the pair round-robin on their public URL.
func (p *replicaPair) proxy(t *testing.T) *httptest.Server {
	t.Helper()
	return listenRoundRobin(t, p.addr, p.a, p.b)
}

// listenRoundRobin serves a round-robin proxy over the replicas on addr (the
// replicas' public base URL).
func listenRoundRobin(t *testing.T, addr string, backends ...*replica) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(roundRobinHandler(backends...))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func roundRobinHandler(backends ...*replica) http.Handler {
	var n atomic.Int64
	targets := make([]*url.URL, len(backends))
	for i, b := range backends {
		targets[i], _ = url.Parse(b.URL)
	}
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[int(n.Add(1))%len(targets)])
		r.Out.Host = r.In.Host
	}}
}

func TestReplicasShareOneIdempotencyKey(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 1, startReplica)
	dsn, a, b, w := rp.dsn, rp.a, rp.b, rp.w
	proxy := rp.proxy(t)

	var wg sync.WaitGroup
	ids := make([]float64, 20)
	errs := make([]error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := callTool(proxy.URL, w.tokens[0], "post_session_note", w.note("Same", "Same body", "one-key"))
			if err == nil && (r.isError || r.rpcErr != "") {
				err = fmt.Errorf("refused: %s %s", r.text, r.rpcErr)
			}
			if err == nil {
				ids[i], _ = r.data["id"].(float64)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("retry %d: %v", i, err)
		}
		if ids[i] == 0 || ids[i] != ids[0] {
			t.Fatalf("retry %d got note %v, retry 0 got %v", i, ids[i], ids[0])
		}
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM notes WHERE idempotency_key = 'one-key'`); n != 1 {
		t.Fatalf("%d rows for one key over two replicas, want 1", n)
	}
	if !strings.Contains(a.logs.String(), "POST") && !strings.Contains(b.logs.String(), "POST") {
		t.Log("request lines not logged at this level")
	}
}

func TestKill9WhilePostingLosesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	addr := freePort(t)
	base := "http://" + addr
	start := func() *replica {
		r := startReplica(t, dsn, base, "--addr", addr)
		r.waitReady()
		return r
	}
	r := start()
	w := newWorld(t, dsn, base, 8)

	const perClient = 30
	var mu sync.Mutex
	acked := map[string]float64{}
	var total atomic.Int64
	// postAll has 8 clients post their perClient notes at once, each with a
	// key derived from its content, and hands each reply to each.
	postAll := func(each func(key string, res *toolReply, err error)) {
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perClient {
					subject, body := fmt.Sprintf("Note %d-%d", c, i), fmt.Sprintf("Body of note %d from client %d", i, c)
					sum := sha256.Sum256([]byte(subject + "\x00" + body))
					key := hex.EncodeToString(sum[:16])
					res, err := callTool(base, w.tokens[c], "post_session_note", w.note(subject, body, key))
					each(key, res, err)
				}
			}()
		}
		wg.Wait()
	}
	killed := make(chan struct{})
	var once sync.Once
	postAll(func(key string, res *toolReply, err error) {
		if err == nil && res.status == 200 && !res.isError && res.rpcErr == "" {
			mu.Lock()
			acked[key], _ = res.data["id"].(float64)
			mu.Unlock()
			if total.Add(1) >= 60 {
				once.Do(func() {
					_ = r.cmd.Process.Signal(syscall.SIGKILL)
					close(killed)
				})
			}
		}
	})
	select {
	case <-killed:
	default:
		t.Fatal("the server was never killed")
	}
	<-r.done
	ackedBefore := len(acked)
	r = start()

	// Every client now (re)sends every note: retries of acknowledged notes must
	// come back as duplicates with the same id; the rest are stored once.
	var duplicates atomic.Int64
	postAll(func(key string, res *toolReply, err error) {
		if err != nil || res.isError || res.rpcErr != "" {
			t.Errorf("retry after restart: %v %+v", err, res)
			return
		}
		id, _ := res.data["id"].(float64)
		if first, ok := acked[key]; ok {
			if dup, _ := res.data["duplicate"].(bool); !dup || id != first {
				t.Errorf("acknowledged note %s came back as id %v duplicate=%v, first id %v", key, id, res.data["duplicate"], first)
				return
			}
			duplicates.Add(1)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	if duplicates := int(duplicates.Load()); duplicates != ackedBefore {
		t.Fatalf("duplicates %d, acknowledged before the kill %d", duplicates, ackedBefore)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM notes WHERE session_id = $1`, w.session.ID); n != 8*perClient {
		t.Fatalf("%d notes stored, want exactly %d", n, 8*perClient)
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM resource_events WHERE session_id = $1 AND kind = 'note_posted'`, w.session.ID); n != 8*perClient {
		t.Fatalf("%d note events, want %d (one per note)", n, 8*perClient)
	}
	t.Logf("acknowledged before kill -9: %d of %d; all %d stored exactly once after restart", ackedBefore, 8*perClient, 8*perClient)
}

func TestToolCallsDuringDatabaseOutage(t *testing.T) {
	t.Parallel()
	pg := ownCluster(t)
	addr := freePort(t)
	base := "http://" + addr
	r := startReplica(t, pg.DSN, base, "--addr", addr)
	r.waitReady()
	w := newWorld(t, pg.DSN, base, 5)
	before, err := callTool(base, w.tokens[0], "post_session_note", w.note("Before", "Before the outage", "before"))
	if err != nil || before.isError {
		t.Fatalf("before: %v %+v", err, before)
	}
	w.st.Close()

	// Load across the outage: 4 clients post notes with content-derived keys
	// (at most 400 calls each), retrying each note until it is acknowledged.
	stopLoad := make(chan struct{})
	type outcome struct{ ok, unavailable, other int }
	results := make([]outcome, 4)
	var oks, refusals [4]atomic.Int64 // the same counts, read while the load runs
	// more waits until every client has had n more answers of a kind than now.
	more := func(n int64, counters *[4]atomic.Int64, what string) {
		t.Helper()
		var want [4]int64
		for c := range counters {
			want[c] = counters[c].Load() + n
		}
		if !waitFor(20*time.Second, func() bool {
			for c := range counters {
				if counters[c].Load() < want[c] {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("the load clients did not get %d more %s each", n, what)
		}
	}
	acked := make([]map[string]float64, 4)
	var loadWG sync.WaitGroup
	for c := range 4 {
		acked[c] = map[string]float64{}
		loadWG.Add(1)
		go func() {
			defer loadWG.Done()
			i := 0
			for range 400 {
				select {
				case <-stopLoad:
					return
				default:
				}
				key := fmt.Sprintf("load-%d-%d", c, i)
				res, err := callTool(base, w.tokens[1+c], "post_session_note", w.note("Load "+key, "Body "+key, key))
				switch {
				case err == nil && res.status == 200 && !res.isError && res.rpcErr == "":
					acked[c][key], _ = res.data["id"].(float64)
					results[c].ok++
					oks[c].Add(1)
					i++
				case err == nil && res.status == http.StatusServiceUnavailable && strings.Contains(res.rpcErr, "database"):
					results[c].unavailable++
					refusals[c].Add(1)
				case err == nil && res.rpcErr != "" && !strings.Contains(res.rpcErr, "panic"):
					results[c].unavailable++ // a call already past the token check when the database went away
					refusals[c].Add(1)
				default:
					results[c].other++
					t.Errorf("client %d: unexpected answer during the outage: %v %+v", c, err, res)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	more(2, &oks, "acknowledgements before the outage")

	pg.Stop()
	for _, tool := range []string{"list_agents", "post_session_note", "read_session_mail"} {
		res, err := callTool(base, w.tokens[0], tool, w.note("During", "During", "during"))
		if err != nil {
			t.Fatalf("%s during outage: %v", tool, err)
		}
		if res.status != http.StatusServiceUnavailable || !strings.Contains(res.rpcErr, "database") {
			t.Fatalf("%s during outage: HTTP %d %+v, want 503 with a clear JSON-RPC error", tool, res.status, res)
		}
	}
	more(5, &refusals, "refusals without a database")
	pg.restart()
	r.waitReady()
	more(2, &oks, "acknowledgements against the recovered database")
	close(stopLoad)
	loadWG.Wait()
	total := outcome{}
	for c := range 4 {
		total.ok += results[c].ok
		total.unavailable += results[c].unavailable
		total.other += results[c].other
	}
	if total.unavailable == 0 || total.ok == 0 {
		t.Fatalf("the load never met the outage or never succeeded: %+v", total)
	}
	db := storetest.SQLAt(t, pg.DSN)
	for c := range 4 {
		for key, id := range acked[c] {
			var n int
			var stored float64
			if err := db.QueryRow(`SELECT count(*), coalesce(max(id), 0) FROM notes WHERE idempotency_key = $1`, key).Scan(&n, &stored); err != nil {
				t.Fatal(err)
			}
			if n != 1 || stored != id {
				t.Fatalf("acknowledged note %s (id %v): %d rows, id %v", key, id, n, stored)
			}
		}
	}
	t.Logf("under load across the outage: %d acknowledged (all stored once), %d clear refusals, %d other", total.ok, total.unavailable, total.other)
	var after *toolReply
	for range 100 { // the pool reconnects on demand; bounded retries
		after, err = callTool(base, w.tokens[0], "read_session_mail", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID})
		if err == nil && after.status == 200 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || after.isError || !strings.Contains(after.text, `"notes"`) {
		t.Fatalf("after recovery: %v %+v", err, after)
	}
	var kept int
	if err := db.QueryRow(`SELECT count(*) FROM notes WHERE idempotency_key = 'before' AND body = 'Before the outage'`).Scan(&kept); err != nil || kept != 1 {
		t.Fatalf("the note acknowledged before the outage: %d rows, %v", kept, err)
	}
	if strings.Contains(r.logs.String(), "panic") {
		t.Fatal("panic in the server log")
	}
}
