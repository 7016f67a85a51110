// Command osfoundry-bench measures osFoundry under closed-loop load: each MCP
// tool an agent calls in a hot loop, the anonymous tools/list, and the owner's
// unchanged Team mail poll, at several concurrencies; and, in the same run, the
// physical ceiling of a note insert straight through pgx, so each write tool
// can be read as a fraction of what the database alone allows.
//
// By default it starts its own private PostgreSQL and an osfoundry server
// process (built from this checkout); with --url and DATABASE_URL it targets
// a running server instead.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/pgserver"
)

type options struct {
	mode        string
	url         string
	databaseURL string
	out         string
	levels      []int
	duration    time.Duration
	sessions    int
	pprof       string
	only        string
	streams     int
	streamNotes int
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "osfoundry-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	var levels string
	flag.StringVar(&o.mode, "mode", "short", "short (about a minute in all) or full (several minutes, steadier figures)")
	flag.StringVar(&o.url, "url", "", "base URL of a running server to measure (needs DATABASE_URL of its database); default: start one")
	flag.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "database of the --url server (DATABASE_URL)")
	flag.StringVar(&o.out, "json", "bench-results.json", "where to write the results as JSON")
	flag.StringVar(&levels, "concurrency", "1,8,32", "comma-separated concurrency levels")
	flag.IntVar(&o.sessions, "sessions", 8, "sessions the write load is spread over")
	flag.StringVar(&o.pprof, "pprof-addr", "", "when starting its own server, have it serve pprof profiles here (loopback)")
	flag.StringVar(&o.only, "only", "", "run only the scenarios whose name contains this text")
	flag.IntVar(&o.streams, "streams", 2000, "live Team mail streams to hold open in the \""+streamsScenario+"\" scenario (0: skip it)")
	flag.IntVar(&o.streamNotes, "stream-notes", 20, "notes timed across all the open streams")
	flag.Parse()
	switch o.mode {
	case "short":
		o.duration = 1500 * time.Millisecond
	case "full":
		o.duration = 10 * time.Second
	default:
		return fmt.Errorf("--mode %q: use short or full", o.mode)
	}
	for _, s := range strings.Split(levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 256 {
			return fmt.Errorf("--concurrency: %q is not a number from 1 to 256", s)
		}
		o.levels = append(o.levels, n)
	}
	if o.url != "" && o.databaseURL == "" {
		return errors.New("--url needs DATABASE_URL (or --database-url) of that server's database to prepare data")
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	var serverPID int
	if o.url == "" {
		tmp, err := os.MkdirTemp("", "osfbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		_ = os.Chmod(tmp, 0o711)
		fmt.Fprintln(os.Stderr, "starting a private PostgreSQL and an osfoundry server …")
		pg, err := pgserver.Start(ctx, pgserver.Options{DataDir: filepath.Join(tmp, "pg"), Database: "bench", Logger: log})
		if err != nil {
			return err
		}
		defer pg.Stop()
		o.databaseURL = pg.DSN
		bin := filepath.Join(tmp, "osfoundry")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/osfoundry").CombinedOutput(); err != nil {
			return fmt.Errorf("build osfoundry: %v\n%s", err, out)
		}
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		o.url = "http://" + addr
		if o.pprof == "" {
			if o.pprof, err = freeAddr(); err != nil {
				return err
			}
		}
		cmd := exec.Command(bin, "serve", "--addr", addr, "--data-dir", tmp, "--log-level", "warn", "--pprof-addr", o.pprof)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+pg.DSN)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		serverPID = cmd.Process.Pid
		defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
		if err := waitReady(o.url); err != nil {
			return err
		}
	}
	o.url = strings.TrimRight(o.url, "/")

	st, err := store.Open(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	fx, err := prepare(ctx, st, o)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	// The physical ceiling talks to PostgreSQL itself, on a pool of its own.
	rawCfg, err := pgxpool.ParseConfig(o.databaseURL)
	if err != nil {
		return err
	}
	rawCfg.MaxConns = 64
	if fx.pool, err = pgxpool.NewWithConfig(ctx, rawCfg); err != nil {
		return err
	}
	defer fx.pool.Close()
	if serverPID > 0 {
		fx.varsURL = "http://" + o.pprof + "/debug/vars"
	}

	report := &report{Mode: o.mode, URL: o.url, Started: time.Now().UTC(), DurationPerStep: o.duration.String(), GoMaxProcs: runtimeCPUs()}
	fmt.Fprintf(os.Stderr, "measuring %d scenarios × %v concurrency, %v each …\n", len(scenarios(fx))+1, o.levels, o.duration)

	// The physical ceiling first, then every scenario, at each level.
	for _, c := range o.levels {
		r := measure("raw note insert (pgx)", c, o.duration, func(w, i int) error { return fx.rawInsert(ctx, w, i) })
		report.add(r, serverPID)
	}
	for _, sc := range scenarios(fx) {
		if o.only != "" && !strings.Contains(sc.name, o.only) {
			continue
		}
		if sc.name == pollScenario {
			// The write steps added notes: reload the page for a current cursor.
			if err := fx.loadPollURL(); err != nil {
				return err
			}
		}
		for _, c := range o.levels {
			r := measure(sc.name, c, o.duration, sc.call)
			report.add(r, serverPID)
		}
	}
	pollQueries, err := fx.pollQueryCount(ctx)
	if err == nil {
		report.PollQueriesDuringUnchangedPolls = &pollQueries
	}
	if o.streams > 0 && (o.only == "" || strings.Contains(streamsScenario, o.only)) {
		fmt.Fprintf(os.Stderr, "opening %d live streams …\n", o.streams)
		sr, err := fx.runStreams(o.streams, o.streamNotes, serverPID, o.pprof)
		if err != nil {
			return fmt.Errorf("%s: %w", streamsScenario, err)
		}
		report.Streams = sr
	}
	report.finish()
	report.print(os.Stdout)
	b, _ := json.MarshalIndent(report, "", "  ")
	if err := os.WriteFile(o.out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "results written to %s\n", o.out)
	return nil
}

func runtimeCPUs() int {
	n, _ := strconv.Atoi(strings.TrimSpace(readFile("/sys/fs/cgroup/cpu.max")))
	if n > 0 {
		return n
	}
	b, _ := exec.Command("nproc").Output()
	n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func readFile(p string) string { b, _ := os.ReadFile(p); return string(b) }

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitReady(base string) error {
	for range 600 {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server at %s did not become ready", base)
}

// fixture is the prepared data: a workspace with one project, sessions, and
// one connection (token, claimed profile, invitation) per worker.
type fixture struct {
	url         string
	http        *http.Client
	pool        *pgxpool.Pool // for rawInsert
	workspaceID int64
	sessions    []*store.Session
	agents      []agent
	owner       *http.Client
	pollURL     string
	pollPath    string
	varsURL     string
	runID       string
	seq         atomic.Int64
}

type agent struct {
	connectionID int64
	token        string
	slug         string
}

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
	fx := &fixture{url: o.url, workspaceID: owner.WorkspaceID, runID: runID,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: maxWorkers, MaxConnsPerHost: 0}, Timeout: 30 * time.Second}}
	for i := range o.sessions {
		s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: owner.WorkspaceID, ProjectID: project.ID, Type: "team_session", Title: fmt.Sprintf("Bench %d", i), CreatedBy: owner.ID})
		if err != nil {
			return nil, err
		}
		fx.sessions = append(fx.sessions, s)
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
	// Mail to read: 30 notes in each session, some replies to the first agent.
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

var csrfRe = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn gets an owner cookie and finds the session page's poll URL.
func (fx *fixture) signIn(email, password string) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: fx.http.Transport, Timeout: 30 * time.Second}
	res, err := c.Get(fx.url + "/login")
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfRe.FindSubmatch(b)
	if m == nil {
		return errors.New("no CSRF token on /login")
	}
	res, err = c.PostForm(fx.url+"/login", url.Values{"_csrf": {string(m[1])}, "email": {email}, "password": {password}})
	if err != nil {
		return err
	}
	res.Body.Close()
	fx.owner = c
	return fx.loadPollURL()
}

// loadPollURL opens the session page as the owner's browser does and takes
// its poll URL (an hx-get attribute carrying the newest note id shown), so
// that the polls that follow are "unchanged" ones.
func (fx *fixture) loadPollURL() error {
	s := fx.sessions[0]
	res, err := fx.owner.Get(fmt.Sprintf("%s/sessions/%d", fx.url, s.ID))
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if pm := regexp.MustCompile(`hx-get="(/sessions/[^"]*poll[^"]*)"`).FindSubmatch(b); pm != nil {
		fx.pollPath = strings.ReplaceAll(string(pm[1]), "&amp;", "&")
		fx.pollURL = fx.url + fx.pollPath
	}
	return nil
}

// rawInsert is the physical ceiling: the same note + event + notify
// transaction the server runs (store.insertNote's statements: reserve the
// event sequence, insert the note, insert the event, queue webhook
// deliveries and notify), straight through pgx with no HTTP and no session
// or profile lookup.
func (fx *fixture) rawInsert(ctx context.Context, w, i int) error {
	a := fx.agents[w]
	s := fx.sessions[w%len(fx.sessions)]
	key := fmt.Sprintf("raw-%s-%d", fx.runID, fx.seq.Add(1))
	return pgx.BeginFunc(ctx, fx.pool, func(tx pgx.Tx) error {
		var seq, projectID, id int64
		if err := tx.QueryRow(ctx, `UPDATE sessions SET last_event_seq = last_event_seq + 1, updated_at = now() WHERE id = $1 RETURNING last_event_seq, project_id`, s.ID).Scan(&seq, &projectID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name,
				message_type, subject, body, idempotency_key) VALUES ($1, $2, 'agent', $3, $4, 'Bench', 'note', 'Raw', 'Raw body', $5)
				ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING RETURNING id`,
			fx.workspaceID, s.ID, a.connectionID, a.slug, key).Scan(&id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `WITH ev AS (INSERT INTO resource_events (session_id, sequence, kind, note_id, payload) VALUES ($1, $2, 'note_posted', $3, '{}')),
			outbox AS (INSERT INTO webhook_deliveries (endpoint_id, note_id) SELECT e.id, $3 FROM webhook_endpoints e
				WHERE e.project_id = $5 AND e.enabled RETURNING id)
			SELECT pg_notify('osfoundry_notes', $4), (SELECT pg_notify('osfoundry_webhooks', '') FROM outbox LIMIT 1)`, s.ID, seq, id, fmt.Sprintf("%d:%d", s.ID, id), projectID)
		return err
	})
}

// pollScenario is the owner's Team mail poll when nothing changed.
const pollScenario = "owner poll, unchanged"

type scenario struct {
	name string
	call func(w, i int) error
}

func scenarios(fx *fixture) []scenario {
	s := []scenario{
		{"set_status", func(w, i int) error {
			return fx.tool(w, "set_status", map[string]any{"task": fmt.Sprintf("step %d", i), "repo": "osfoundry", "branch": "main"}, false)
		}},
		{"post_session_note", func(w, i int) error {
			s := fx.sessions[w%len(fx.sessions)]
			return fx.tool(w, "post_session_note", map[string]any{"session_type": s.Type, "session_id": s.PublicID,
				"subject": "Progress", "body": fmt.Sprintf("Note %d of worker %d", i, w), "idempotency_key": fmt.Sprintf("u-%s-%d", fx.runID, fx.seq.Add(1))}, false)
		}},
		{"post_session_note retry", func(w, i int) error {
			s := fx.sessions[w%len(fx.sessions)]
			return fx.tool(w, "post_session_note", map[string]any{"session_type": s.Type, "session_id": s.PublicID,
				"subject": "Retry", "body": "The same note again", "idempotency_key": fmt.Sprintf("r-%s-%d", fx.runID, w)}, false)
		}},
		{"read_session_mail", func(w, i int) error {
			s := fx.sessions[w%len(fx.sessions)]
			return fx.tool(w, "read_session_mail", map[string]any{"session_type": s.Type, "session_id": s.PublicID, "limit": 10}, false)
		}},
		{"list_agents", func(w, i int) error { return fx.tool(w, "list_agents", map[string]any{}, false) }},
		{"tools/list (anonymous)", func(w, i int) error { return fx.rpc("", "tools/list", map[string]any{}) }},
	}
	if fx.pollURL != "" {
		s = append(s, scenario{pollScenario, func(w, i int) error { return fx.poll() }})
	}
	return s
}

func (fx *fixture) tool(w int, name string, args map[string]any, _ bool) error {
	return fx.rpc(fx.agents[w].token, "tools/call", map[string]any{"name": name, "arguments": args})
}

func (fx *fixture) rpc(token, method string, params any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fx.seq.Add(1), "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, fx.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := fx.http.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", res.StatusCode, b)
	}
	if bytes.Contains(b, []byte(`"isError":true`)) || bytes.Contains(b, []byte(`"error":{`)) {
		return fmt.Errorf("tool error: %.300s", b)
	}
	return nil
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

// pollQueryCount runs 200 unchanged polls and reads the server's own count
// of statements sent to PostgreSQL (expvar db_queries) before and after.
func (fx *fixture) pollQueryCount(ctx context.Context) (int64, error) {
	if fx.pollURL == "" || fx.varsURL == "" {
		return 0, errors.New("no poll URL or no server counters")
	}
	read := func() (int64, error) {
		res, err := http.Get(fx.varsURL)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		var v struct {
			Queries int64 `json:"db_queries"`
		}
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
			return 0, err
		}
		return v.Queries, nil
	}
	before, err := read()
	if err != nil {
		return 0, err
	}
	for range 200 {
		if err := fx.poll(); err != nil {
			return 0, err
		}
	}
	after, err := read()
	if err != nil {
		return 0, err
	}
	return after - before, nil
}

// result is one scenario at one concurrency.
type result struct {
	Scenario    string  `json:"scenario"`
	Concurrency int     `json:"concurrency"`
	Calls       int     `json:"calls"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	PerSecond   float64 `json:"calls_per_second"`
	P50ms       float64 `json:"p50_ms"`
	P95ms       float64 `json:"p95_ms"`
	P99ms       float64 `json:"p99_ms"`
	ServerRSSMB float64 `json:"server_rss_mb,omitempty"`
	// RatioToCeiling is calls/s over the raw insert's at the same concurrency (write tools only).
	RatioToCeiling *float64 `json:"ratio_to_raw_insert,omitempty"`
}

// measure runs call in a closed loop on c workers for d.
func measure(name string, c int, d time.Duration, call func(w, i int) error) result {
	lat := make([][]time.Duration, c)
	errs := make([]int, c)
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && i < 1_000_000; i++ {
				t0 := time.Now()
				err := call(w, i)
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil {
					errs[w]++
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	nerr := 0
	for w := range c {
		all = append(all, lat[w]...)
		nerr += errs[w]
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	r := result{Scenario: name, Concurrency: c, Calls: len(all), Errors: nerr,
		PerSecond: float64(len(all)) / elapsed.Seconds(), P50ms: pct(.50), P95ms: pct(.95), P99ms: pct(.99)}
	if v, ok := firstErr.Load().(string); ok {
		r.FirstError = v
	}
	return r
}

type report struct {
	Mode                            string    `json:"mode"`
	URL                             string    `json:"url"`
	Started                         time.Time `json:"started"`
	DurationPerStep                 string    `json:"duration_per_step"`
	GoMaxProcs                      int       `json:"cpus"`
	Results                         []result  `json:"results"`
	MaxServerRSSMB                  float64   `json:"max_server_rss_mb"`
	PollQueriesDuringUnchangedPolls *int64    `json:"db_transactions_during_200_unchanged_polls,omitempty"`
	// Streams is the live streams scenario.
	Streams *streamsResult `json:"live_streams,omitempty"`
}

func (r *report) add(res result, pid int) {
	if pid > 0 {
		res.ServerRSSMB = rssMB(pid)
		r.MaxServerRSSMB = max(r.MaxServerRSSMB, res.ServerRSSMB)
	}
	fmt.Fprintf(os.Stderr, "  %-26s c=%-3d %9.0f/s  p99 %6.2f ms  errors %d\n", res.Scenario, res.Concurrency, res.PerSecond, res.P99ms, res.Errors)
	r.Results = append(r.Results, res)
}

// finish computes each write tool's ratio to the raw insert ceiling.
func (r *report) finish() {
	ceiling := map[int]float64{}
	for _, x := range r.Results {
		if strings.HasPrefix(x.Scenario, "raw note insert") {
			ceiling[x.Concurrency] = x.PerSecond
		}
	}
	for i, x := range r.Results {
		if c := ceiling[x.Concurrency]; c > 0 && (strings.HasPrefix(x.Scenario, "post_session_note") || x.Scenario == "set_status") {
			ratio := x.PerSecond / c
			r.Results[i].RatioToCeiling = &ratio
		}
	}
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nosfoundry-bench — mode %s, %s per step, %d CPUs, server %s\n\n", r.Mode, r.DurationPerStep, r.GoMaxProcs, r.URL)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tconc\tcalls/s\tp50 ms\tp95 ms\tp99 ms\terrors\tvs raw insert\tserver RSS MB\t")
	for _, x := range r.Results {
		ratio := "-"
		if x.RatioToCeiling != nil {
			ratio = fmt.Sprintf("%.0f %%", *x.RatioToCeiling*100)
		}
		rss := "-"
		if x.ServerRSSMB > 0 {
			rss = fmt.Sprintf("%.0f", x.ServerRSSMB)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t%s\t%s\t\n", x.Scenario, x.Concurrency, x.PerSecond, x.P50ms, x.P95ms, x.P99ms, x.Errors, ratio, rss)
	}
	tw.Flush()
	if r.MaxServerRSSMB > 0 {
		fmt.Fprintf(w, "\nmax server RSS: %.0f MB\n", r.MaxServerRSSMB)
	}
	if r.PollQueriesDuringUnchangedPolls != nil {
		fmt.Fprintf(w, "database queries by the server during 200 unchanged polls: %d\n", *r.PollQueriesDuringUnchangedPolls)
	}
	if s := r.Streams; s != nil {
		fmt.Fprintf(w, "\n%s: %d open Team mail streams (opened in %.1f s)\n", streamsScenario, s.Streams, s.OpenSeconds)
		if s.ServerRSSMB > 0 {
			fmt.Fprintf(w, "  server RSS %.0f MB (%.0f MB before), goroutines %d (%d before)\n", s.ServerRSSMB, s.ServerRSSBeforeMB, s.Goroutines, s.GoroutinesBefore)
		}
		fmt.Fprintf(w, "  one note to all %d streams, %d notes: p50 %.1f ms, p99 %.1f ms per stream; all reached in %.1f ms (median), %.1f ms (worst); %d events missing\n",
			s.Streams, s.Notes, s.P50ms, s.P99ms, s.LastP50ms, s.LastMaxms, s.Missing)
	}
	for _, x := range r.Results {
		if x.FirstError != "" {
			fmt.Fprintf(w, "first error of %s at %d: %s\n", x.Scenario, x.Concurrency, x.FirstError)
		}
	}
}

func rssMB(pid int) float64 {
	for _, line := range strings.Split(readFile(fmt.Sprintf("/proc/%d/status", pid)), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
