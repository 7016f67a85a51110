package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// Webhooks through the real server processes: deliveries survive kill -9 of
// the server and an outage of PostgreSQL, two replicas deliver each note
// once, and the SSRF guard refuses a loopback URL without the operator's flag.

// startWebhookReplica starts a test server that may post to loopback
// receivers, with the sender's waits shortened (testServerConfig).
func startWebhookReplica(t *testing.T, dsn, baseURL string, extra ...string) *replica {
	t.Helper()
	return startTestReplica(t, dsn, baseURL, append([]string{"--allow-private-targets"}, extra...)...)
}

// hookSink is a loopback receiver that records each delivery's webhook-id
// and note subject, in arrival order.
type hookSink struct {
	url  string
	mu   sync.Mutex
	got  []sinkHit
	hold func(n int) // called before answering the n-th request (0-based), may block
}

type sinkHit struct {
	id, subject string
}

func newHookSink(t *testing.T) *hookSink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &hookSink{url: "http://" + l.Addr().String() + "/hook"}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev struct {
			Note struct{ Subject string } `json:"note"`
		}
		_ = json.Unmarshal(b, &ev)
		s.mu.Lock()
		n := len(s.got)
		s.got = append(s.got, sinkHit{id: r.Header.Get("webhook-id"), subject: ev.Note.Subject})
		hold := s.hold
		s.mu.Unlock()
		if hold != nil {
			hold(n)
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *hookSink) hits() []sinkHit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// subjects lists the distinct subjects received, in first-arrival order.
func (s *hookSink) subjects() []string {
	var out []string
	for _, h := range s.hits() {
		if !slices.Contains(out, h.subject) {
			out = append(out, h.subject)
		}
	}
	return out
}

// hookEndpoint adds a json endpoint of the world's project.
func (w *world) hookEndpoint(t *testing.T, url string) *store.WebhookEndpoint {
	t.Helper()
	e, _, err := w.st.CreateWebhookEndpoint(context.Background(), store.NewWebhookEndpoint{WorkspaceID: w.owner.WorkspaceID,
		ProjectID: w.session.ProjectID, URL: url, Kind: store.WebhookJSON})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// postNotes posts n notes through base with the world's first agent and
// returns their subjects, in order.
func (w *world) postNotes(t *testing.T, base, prefix string, n int) []string {
	t.Helper()
	var subjects []string
	for i := range n {
		subject := fmt.Sprintf("%s %02d", prefix, i)
		res, err := callTool(base, w.tokens[0], "post_session_note", w.note(subject, "body", subject))
		if err != nil || res.isError || res.rpcErr != "" {
			t.Fatalf("post %s: %v %+v", subject, err, res)
		}
		subjects = append(subjects, subject)
	}
	return subjects
}

// deliveryStates counts the endpoint's deliveries by state.
func deliveryStates(t *testing.T, dsn string, endpointID int64) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, st := range []string{store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed} {
		out[st] = countRows(t, dsn, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND state = $2`, endpointID, st)
	}
	return out
}

// TestWebhooksSurviveKill9MidDelivery kills the server while its first
// delivery is at the receiver (not yet answered), with nine more due. After a
// restart every note arrives, in order; the one in flight at the kill comes
// again with the same webhook-id (at least once: the receiver may drop it).
func TestWebhooksSurviveKill9MidDelivery(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	addr := freePort(t)
	base := "http://" + addr
	r := startWebhookReplica(t, dsn, base, "--addr", addr)
	r.waitReady()
	w := newWorld(t, dsn, base, 1)
	sink := newHookSink(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	sink.hold = func(n int) {
		if n == 0 {
			close(arrived)
			<-release
		}
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	e := w.hookEndpoint(t, sink.url)
	subjects := w.postNotes(t, base, "kill", 10)
	<-arrived
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.done
	close(release)
	if got := deliveryStates(t, dsn, e.ID); got[store.DeliveryPending] != 10 {
		t.Fatalf("after kill -9: %v, want all 10 pending", got)
	}

	restarted := time.Now()
	r = startWebhookReplica(t, dsn, base, "--addr", addr)
	r.waitReady()
	awaitCond(t, 30*time.Second, "every note after the restart", func() bool { return len(sink.subjects()) == 10 })
	took := time.Since(restarted)
	if got := sink.subjects(); !slices.Equal(got, subjects) {
		t.Fatalf("received %v, want %v in order", got, subjects)
	}
	hits := sink.hits()
	if len(hits) != 11 || hits[0].id != hits[1].id || hits[0].subject != subjects[0] {
		t.Fatalf("want the interrupted delivery twice with one webhook-id, then the rest once: %+v", hits)
	}
	awaitCond(t, 10*time.Second, "all recorded as delivered", func() bool {
		return deliveryStates(t, dsn, e.ID)[store.DeliveryDelivered] == 10
	})
	if n := countRows(t, dsn, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND attempts = 2`, e.ID); n != 1 {
		t.Fatalf("%d deliveries took two attempts, want the interrupted one", n)
	}
	t.Logf("kill -9 with 10 deliveries due (one at the receiver): all delivered %v after the restart (a 3 s lease)", took.Round(time.Millisecond))
}

// TestWebhooksAcrossDatabaseOutage stops PostgreSQL while deliveries are
// going out; once it is back every note is delivered, exactly once, in order.
func TestWebhooksAcrossDatabaseOutage(t *testing.T) {
	t.Parallel()
	pg := ownCluster(t)
	addr := freePort(t)
	base := "http://" + addr
	r := startWebhookReplica(t, pg.DSN, base, "--addr", addr)
	r.waitReady()
	w := newWorld(t, pg.DSN, base, 1)
	sink := newHookSink(t)
	// A slow receiver, so the outage finds deliveries in flight.
	sink.hold = func(int) { time.Sleep(40 * time.Millisecond) }
	e := w.hookEndpoint(t, sink.url)
	subjects := w.postNotes(t, base, "outage", 30)
	awaitCond(t, 20*time.Second, "the first deliveries", func() bool { return len(sink.hits()) >= 5 })

	pg.Stop()
	awaitCond(t, 20*time.Second, "the sender to meet the outage", func() bool {
		logs := r.logs.String()
		return strings.Contains(logs, "cannot claim deliveries") || strings.Contains(logs, "not recorded yet")
	})
	during := len(sink.hits())
	pg.restart()
	awaitCond(t, 60*time.Second, "every note after the outage", func() bool { return len(sink.subjects()) == 30 })
	hits := sink.hits()
	if got := sink.subjects(); !slices.Equal(got, subjects) || len(hits) != 30 {
		t.Fatalf("received %d deliveries, subjects %v; want each of %v once, in order", len(hits), got, subjects)
	}
	awaitCond(t, 20*time.Second, "all recorded as delivered", func() bool {
		return deliveryStates(t, pg.DSN, e.ID)[store.DeliveryDelivered] == 30
	})
	t.Logf("PostgreSQL stopped after %d of 30 deliveries: all 30 delivered once, in order, after it came back", during)
}

// TestWebhooksTwoReplicasDeliverOnce posts notes through two server
// processes on one database, each running its sender: every endpoint gets
// every note exactly once, in order.
func TestWebhooksTwoReplicasDeliverOnce(t *testing.T) {
	t.Parallel()
	rp := startReplicaPair(t, 1, startWebhookReplica)
	a, b, w := rp.a, rp.b, rp.w
	proxy := rp.proxy(t)
	sinks := []*hookSink{newHookSink(t), newHookSink(t), newHookSink(t)}
	for _, s := range sinks {
		w.hookEndpoint(t, s.url)
	}
	subjects := w.postNotes(t, proxy.URL, "replicas", 40)
	for i, s := range sinks {
		awaitCond(t, 30*time.Second, "every note at every endpoint", func() bool { return len(s.subjects()) == 40 })
		if got := s.subjects(); !slices.Equal(got, subjects) || len(s.hits()) != 40 {
			t.Fatalf("endpoint %d: %d deliveries, subjects %v", i, len(s.hits()), got)
		}
	}
	sentBy := func(r *replica) int { return strings.Count(r.logs.String(), "webhook delivered") }
	t.Logf("two replicas, 3 endpoints × 40 notes: each delivered once (%d by one replica, %d by the other)", sentBy(a), sentBy(b))
}

// TestWebhooksRefuseLoopbackWithoutTheFlag proves the wiring of
// --allow-private-targets to the sender: without it, a delivery to a
// loopback receiver fails at dial time and the receiver gets nothing. Once
// the operator restarts the server with the flag, the owner's Retry on the
// failed delivery delivers it.
func TestWebhooksRefuseLoopbackWithoutTheFlag(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	r := startTestReplica(t, dsn, "")
	r.waitReady()
	w := newWorld(t, dsn, r.URL, 1)
	sink := newHookSink(t)
	e := w.hookEndpoint(t, sink.url)
	w.postNotes(t, r.URL, "private", 1)
	awaitCond(t, 20*time.Second, "the delivery to fail", func() bool { return deliveryStates(t, dsn, e.ID)[store.DeliveryFailed] == 1 })
	if n := countRows(t, dsn, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND attempts = 1
		AND last_error LIKE '%not a public internet address%' AND response_code IS NULL`, e.ID); n != 1 {
		t.Fatal("the failure does not say the address is not public")
	}
	if n := len(sink.hits()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}

	// The operator restarts the server with the flag; the owner retries.
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-r.done
	r = startWebhookReplica(t, dsn, r.URL, "--addr", strings.TrimPrefix(r.URL, "http://"))
	r.waitReady()
	owner := newOwnerBrowser(t, r.URL, w)
	owner.signIn()
	page := fmt.Sprintf("/projects/%d/webhooks/%d", e.ProjectID, e.ID)
	_, doc, err := owner.page(page)
	if err != nil {
		t.Fatal(err)
	}
	retry := doc.Find(`[data-testid="delivery-retry"]`).Closest("form")
	if retry.Length() != 1 {
		t.Fatal("the failed delivery has no Retry")
	}
	res, err := owner.post(retry.AttrOr("action", ""), inputs(doc, `[data-testid="delivery"]`, false))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %v %v", res, err)
	}
	awaitCond(t, 20*time.Second, "the retried delivery to arrive", func() bool { return deliveryStates(t, dsn, e.ID)[store.DeliveryDelivered] == 1 })
	if hits := sink.hits(); len(hits) != 1 || hits[0].subject != "private 00" {
		t.Fatalf("the receiver got %v", hits)
	}
}
