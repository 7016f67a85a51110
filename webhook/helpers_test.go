package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// world is a workspace with a project, a session and an agent invited to
// it, on a database of the test's own.
type world struct {
	t       *testing.T
	dsn     string
	st      *store.Store
	owner   *store.Owner
	project *store.Project
	session *store.Session
	connID  int64
	keys    atomic.Int64
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{t: t, dsn: storetest.NewDatabase(t)}
	w.st = w.open()
	var err error
	if w.owner, err = w.st.CreateOwner(ctx, store.NewOwner{Email: "o@example.com", DisplayName: "Olive Owner", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	if w.project, err = w.st.CreateProject(ctx, w.owner.WorkspaceID, "Storefront"); err != nil {
		t.Fatal(err)
	}
	// The senders' tests post hundreds of notes as fast as they go: the most
	// writes a project allows.
	if err := w.st.SetProjectWriteLimits(ctx, w.owner.WorkspaceID, w.project.ID, store.WriteLimits{PerMinute: store.MaxWritesPerMinute, Burst: store.MaxWriteBurst}); err != nil {
		t.Fatal(err)
	}
	if w.session, err = w.st.CreateSession(ctx, store.NewSession{WorkspaceID: w.owner.WorkspaceID, ProjectID: w.project.ID, Type: "team_session", Title: "Checkout redesign"}); err != nil {
		t.Fatal(err)
	}
	c, err := w.st.CreateConnection(ctx, store.NewConnection{WorkspaceID: w.owner.WorkspaceID, OwnerID: w.owner.ID, ClientName: "cli",
		Scopes: store.AllScopes, ProjectIDs: []int64{w.project.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.ClaimProfile(ctx, w.owner.WorkspaceID, c.ID, "ada", "Ada Agent"); err != nil {
		t.Fatal(err)
	}
	if err := w.st.Invite(ctx, w.owner.WorkspaceID, w.session.ID, c.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	w.connID = c.ID
	return w
}

// open returns another store (pool) on the world's database.
func (w *world) open() *store.Store {
	w.t.Helper()
	st, err := store.Open(context.Background(), w.dsn)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(st.Close)
	return st
}

// note posts an agent's note and returns it.
func (w *world) note(subject, body string) *store.Note {
	w.t.Helper()
	n, _, err := w.st.PostAgentNote(context.Background(), store.AgentNote{WorkspaceID: w.owner.WorkspaceID, ConnectionID: w.connID,
		SessionType: w.session.Type, SessionID: w.session.PublicID, Subject: subject, Body: body, IdempotencyKey: fmt.Sprint("k", w.keys.Add(1))})
	if err != nil {
		w.t.Fatal(err)
	}
	return n
}

// endpoint adds an endpoint and returns it with its signing key.
func (w *world) endpoint(url, kind string) (*store.WebhookEndpoint, []byte) {
	w.t.Helper()
	e, secret, err := w.st.CreateWebhookEndpoint(context.Background(), store.NewWebhookEndpoint{WorkspaceID: w.owner.WorkspaceID,
		ProjectID: w.project.ID, URL: url, Kind: kind})
	if err != nil {
		w.t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		w.t.Fatal(err)
	}
	return e, key
}

// log returns an endpoint's delivery log, newest first.
func (w *world) log(e *store.WebhookEndpoint) []store.WebhookDelivery {
	w.t.Helper()
	l, err := w.st.ListWebhookDeliveries(context.Background(), w.owner.WorkspaceID, w.project.ID, e.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

// waitFor polls cond every 20 ms for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testOptions are fast waits for tests, private targets allowed (the
// receivers listen on loopback).
func testOptions(st *store.Store) Options {
	return Options{Store: st, BaseURL: "http://osf.example", Logger: quietLog(), AllowPrivateTargets: true,
		Lease: 5 * time.Second, Sweep: 200 * time.Millisecond, MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// run starts a sender woken by a listener of its own (as a replica runs
// them) and stops both at cleanup; stop stops the sender earlier.
func run(t *testing.T, o Options) (s *Sender, stop func()) {
	t.Helper()
	s = New(o)
	l := o.Store.NewListener(o.Logger)
	s.WakeOn(l)
	ctx, cancel := context.WithCancel(context.Background())
	listenDone, sendDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(listenDone); l.Run(ctx) }()
	sctx, stopSender := context.WithCancel(ctx)
	go func() { defer close(sendDone); s.Run(sctx) }()
	<-l.Ready()
	var once sync.Once
	stop = func() { once.Do(func() { stopSender(); <-sendDone }) }
	t.Cleanup(func() { stop(); cancel(); <-listenDone })
	return s, stop
}

// received is one request a receiver got.
type received struct {
	at        time.Time
	path      string
	id, ts    string
	sig       string
	body      []byte
	userAgent string
}

// receiver is a loopback HTTP server that records what it receives and
// answers as answer says (200 when nil). It can be stopped and started again
// on the same address, to play a receiver that is down for a while.
type receiver struct {
	t      *testing.T
	addr   string
	mu     sync.Mutex
	got    []received
	answer func(r *http.Request, n int) (status int, header http.Header)
	// busy counts requests in progress per path; overlap records a second
	// request to a path while one was in progress there.
	busy    map[string]int
	overlap bool
	srv     *http.Server
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, addr: l.Addr().String(), busy: map[string]int{}}
	r.serve(l)
	t.Cleanup(r.stop)
	return r
}

func (r *receiver) url(path string) string { return "http://" + r.addr + path }

func (r *receiver) serve(l net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(r.handle)}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go srv.Serve(l)
}

// stop closes the listener and every connection: the receiver is down.
func (r *receiver) stop() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// start listens again on the same address.
func (r *receiver) start() {
	r.t.Helper()
	var l net.Listener
	var err error
	for range 100 {
		if l, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	r.serve(l)
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	rec := received{at: time.Now(), path: req.URL.Path, id: req.Header.Get(HeaderID), ts: req.Header.Get(HeaderTimestamp),
		sig: req.Header.Get(HeaderSignature), body: b, userAgent: req.Header.Get("User-Agent")}
	r.mu.Lock()
	r.busy[req.URL.Path]++
	if r.busy[req.URL.Path] > 1 {
		r.overlap = true
	}
	n := 0
	for _, g := range r.got {
		if g.path == req.URL.Path {
			n++
		}
	}
	answer := r.answer
	r.mu.Unlock()
	status, header := http.StatusOK, http.Header(nil)
	if answer != nil {
		status, header = answer(req, n)
	}
	r.mu.Lock()
	r.got = append(r.got, rec)
	r.busy[req.URL.Path]--
	r.mu.Unlock()
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
}

// requests returns what path received so far.
func (r *receiver) requests(path string) []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, g := range r.got {
		if g.path == path {
			out = append(out, g)
		}
	}
	return out
}

// verify checks a request's Standard Webhooks signature by hand: the base64
// HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the
// secret's bytes, among the space-separated "v1,<sig>" values, and a
// timestamp within five minutes.
func verify(key []byte, g received) error {
	ts, err := strconv.ParseInt(g.ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q: %v", g.ts, err)
	}
	if d := time.Since(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("webhook-timestamp %d is %v away", ts, d)
	}
	if g.id == "" {
		return fmt.Errorf("no webhook-id")
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", g.id, g.ts, g.body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(g.sig) {
		v, sig, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no valid v1 signature in %q", g.sig)
}
