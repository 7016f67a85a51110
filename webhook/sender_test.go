package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

func TestDeliveriesAreSignedAndShaped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t)
	jsonHook, jsonKey := w.endpoint(rcv.url("/json"), store.WebhookJSON)
	slackHook, slackKey := w.endpoint(rcv.url("/slack"), store.WebhookSlack)
	run(t, testOptions(w.st))

	n := w.note("PR opened <!channel> & @everyone", "Line one\nLine <two> @here\n[Open the session](https://evil.example/phish) ![pixel](https://t.example/p.gif) cc @dev-team")
	waitFor(t, 10*time.Second, "both deliveries", func() bool {
		return len(rcv.requests("/json")) == 1 && len(rcv.requests("/slack")) == 1
	})
	j, s := rcv.requests("/json")[0], rcv.requests("/slack")[0]
	if err := verify(jsonKey, j); err != nil {
		t.Fatalf("json delivery: %v", err)
	}
	if err := verify(slackKey, s); err != nil {
		t.Fatalf("slack delivery: %v", err)
	}
	if verify(slackKey, j) == nil {
		t.Fatal("a delivery verified with another endpoint's secret")
	}
	if j.id == s.id || !strings.HasPrefix(j.id, "msg_") || j.userAgent != "osFoundry-Webhooks/1" {
		t.Fatalf("ids %q %q, user agent %q", j.id, s.id, j.userAgent)
	}

	var ev Event
	if err := json.Unmarshal(j.body, &ev); err != nil {
		t.Fatal(err)
	}
	want := Event{
		Type: EventNotePosted, Timestamp: n.CreatedAt.UTC(),
		Note: &EventNote{ID: n.ID, MessageType: "note", Subject: n.Subject, Body: n.Body,
			Sender:    EventSender{Kind: "agent", Slug: n.SenderSlug, Name: "Ada Agent", Label: "outside assistant"},
			CreatedAt: n.CreatedAt.UTC()},
		Session: &EventSession{ID: w.session.ID, SessionType: "team_session", SessionID: w.session.PublicID, Title: "Checkout redesign"},
		Project: EventProject{ID: w.project.ID, Name: "Storefront"},
		Links: EventLinks{Session: fmt.Sprintf("http://osf.example/sessions/%d", w.session.ID),
			Project: fmt.Sprintf("http://osf.example/projects/%d", w.project.ID)},
	}
	if got, _ := json.Marshal(ev); string(got) != string(mustJSON(t, want)) {
		t.Fatalf("json event\n got %s\nwant %s", got, mustJSON(t, want))
	}
	var slack map[string]string
	if err := json.Unmarshal(s.body, &slack); err != nil || len(slack) != 1 {
		t.Fatalf("slack body %s: %v", s.body, err)
	}
	wantText := "*PR opened &lt;!channel&gt; &amp; @\u200beveryone*\n" +
		"Ada Agent (outside assistant) in Checkout redesign · Storefront\n" +
		"Line one\nLine &lt;two&gt; @\u200bhere\n" +
		"[Open the session]\u200b(https://evil.example/phish) ![pixel]\u200b(https://t.example/p.gif) cc @\u200bdev-team\n" +
		fmt.Sprintf("Open the session: http://osf.example/sessions/%d", w.session.ID)
	if slack["text"] != wantText {
		t.Fatalf("slack text\n got %q\nwant %q", slack["text"], wantText)
	}
	for _, e := range []*store.WebhookEndpoint{jsonHook, slackHook} {
		waitFor(t, 5*time.Second, "the log to show delivered", func() bool {
			l := w.log(e)
			return len(l) == 1 && l[0].State == store.DeliveryDelivered && l[0].Attempts == 1 && *l[0].ResponseCode == 200
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSendTestDelivers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t)
	e, key := w.endpoint(rcv.url("/hook"), store.WebhookJSON)
	run(t, testOptions(w.st))
	if err := w.st.QueueWebhookTest(context.Background(), w.owner.WorkspaceID, w.project.ID, e.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the test delivery", func() bool { return len(rcv.requests("/hook")) == 1 })
	g := rcv.requests("/hook")[0]
	if err := verify(key, g); err != nil {
		t.Fatal(err)
	}
	var ev Event
	if err := json.Unmarshal(g.body, &ev); err != nil || ev.Type != EventTest || ev.Note != nil || ev.Project.Name != "Storefront" ||
		ev.Links.Webhook != fmt.Sprintf("http://osf.example/projects/%d/webhooks/%d", w.project.ID, e.ID) {
		t.Fatalf("test event %s: %v", g.body, err)
	}
}

// TestReceiverDownThenUp: notes posted while the receiver is down are
// retried, and once it is back each endpoint gets every note exactly once,
// in note order, one request at a time.
func TestReceiverDownThenUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t)
	a, _ := w.endpoint(rcv.url("/a"), store.WebhookJSON)
	b, _ := w.endpoint(rcv.url("/b"), store.WebhookSlack)
	rcv.stop()
	run(t, testOptions(w.st))

	var notes []string
	for i := range 20 {
		notes = append(notes, w.note(fmt.Sprint("note ", i), "body").Subject)
	}
	waitFor(t, 10*time.Second, "attempts against the receiver while it is down", func() bool {
		l := w.log(a)
		return len(l) == 20 && l[19].Attempts >= 2 && strings.Contains(l[19].LastError, "refused")
	})
	for _, d := range w.log(a)[:19] {
		if d.Attempts != 0 {
			t.Fatalf("delivery %d was tried (%d attempts) while an older one of its endpoint was pending", d.ID, d.Attempts)
		}
	}
	rcv.start()
	waitFor(t, 20*time.Second, "every note at both endpoints", func() bool {
		return len(rcv.requests("/a")) >= 20 && len(rcv.requests("/b")) >= 20
	})
	for _, path := range []string{"/a", "/b"} {
		var got []string
		ids := map[string]bool{}
		for _, g := range rcv.requests(path) {
			got = append(got, subjectOf(t, g))
			ids[g.id] = true
		}
		if !slices.Equal(got, notes) || len(ids) != 20 {
			t.Fatalf("%s received notes %v (%d ids), want %v once each", path, got, len(ids), notes)
		}
	}
	if rcv.overlap {
		t.Fatal("an endpoint had two requests in flight at once")
	}
	// The receiver counts a request before the sender records its answer.
	waitFor(t, 10*time.Second, "every delivery recorded as delivered", func() bool {
		for _, e := range []*store.WebhookEndpoint{a, b} {
			for _, d := range w.log(e) {
				if d.State != store.DeliveryDelivered {
					return false
				}
			}
		}
		return true
	})
}

// noteOf reads the note id of a json delivery.
func noteOf(t *testing.T, g received) int64 {
	t.Helper()
	var ev Event
	if err := json.Unmarshal(g.body, &ev); err != nil || ev.Note == nil {
		t.Fatalf("body %s: %v", g.body, err)
	}
	return ev.Note.ID
}

// subjectOf reads the note subject of a delivery of either kind.
func subjectOf(t *testing.T, g received) string {
	t.Helper()
	var ev Event
	if err := json.Unmarshal(g.body, &ev); err == nil && ev.Note != nil {
		return ev.Note.Subject
	}
	var slack struct{ Text string }
	if err := json.Unmarshal(g.body, &slack); err != nil || !strings.HasPrefix(slack.Text, "*") {
		t.Fatalf("body %s: %v", g.body, err)
	}
	subject, _, _ := strings.Cut(slack.Text[1:], "*")
	return subject
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		retryAfter func() string
		atLeast    time.Duration
	}{
		{"seconds", func() string { return "2" }, 2 * time.Second},
		// An HTTP date has whole seconds: three seconds ahead is at least two away.
		{"HTTP date", func() string { return time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat) }, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			rcv := newReceiver(t)
			rcv.answer = func(_ *http.Request, n int) (int, http.Header) {
				if n == 0 {
					return http.StatusTooManyRequests, http.Header{"Retry-After": {tc.retryAfter()}}
				}
				return http.StatusOK, nil
			}
			e, _ := w.endpoint(rcv.url("/hook"), store.WebhookJSON)
			run(t, testOptions(w.st))
			w.note("one", "b")
			waitFor(t, 5*time.Second, "the 429", func() bool { return len(rcv.requests("/hook")) == 1 })
			waitFor(t, 5*time.Second, "the log to show the wait", func() bool {
				l := w.log(e)
				return l[0].Attempts == 1 && l[0].ResponseCode != nil && *l[0].ResponseCode == 429 && !l[0].InFlight
			})
			if d := w.log(e)[0]; d.State != store.DeliveryPending || time.Until(d.NextAttemptAt) < tc.atLeast-500*time.Millisecond {
				t.Fatalf("after the 429: %+v, next try in %v", d, time.Until(d.NextAttemptAt))
			}
			waitFor(t, 10*time.Second, "the retry", func() bool { return len(rcv.requests("/hook")) == 2 })
			got := rcv.requests("/hook")
			if gap := got[1].at.Sub(got[0].at); gap < tc.atLeast {
				t.Fatalf("retried after %v; Retry-After asked for %v", gap, tc.atLeast)
			}
			if got[0].id != got[1].id {
				t.Fatalf("webhook-id changed across retries: %q then %q", got[0].id, got[1].id)
			}
		})
	}
}

// TestFailures: which answers fail at once and which are retried until the
// retry window closes.
func TestFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		header   http.Header
		attempts int    // attempts before the delivery failed (0: more than one)
		err      string // in the log's error
	}{
		{"400 fails at once", http.StatusBadRequest, nil, 1, "HTTP 400"},
		{"410 fails at once", http.StatusGone, nil, 1, "HTTP 410"},
		{"302 is not followed", http.StatusFound, http.Header{"Location": {"/elsewhere"}}, 1, "redirects are not followed"},
		{"500 is retried until the window closes", http.StatusInternalServerError, nil, 0, "gave up after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			rcv := newReceiver(t)
			rcv.answer = func(*http.Request, int) (int, http.Header) { return tc.status, tc.header }
			e, _ := w.endpoint(rcv.url("/hook"), store.WebhookJSON)
			o := testOptions(w.st)
			o.RetryWindow = 1500 * time.Millisecond
			run(t, o)
			w.note("one", "b")
			waitFor(t, 10*time.Second, "the delivery to fail", func() bool { return w.log(e)[0].State == store.DeliveryFailed })
			d := w.log(e)[0]
			if !strings.Contains(d.LastError, tc.err) || *d.ResponseCode != tc.status || d.FinishedAt == nil {
				t.Fatalf("log row %+v, want %q", d, tc.err)
			}
			if tc.attempts > 0 && d.Attempts != tc.attempts || tc.attempts == 0 && d.Attempts < 3 {
				t.Fatalf("%d attempts", d.Attempts)
			}
			if n := len(rcv.requests("/hook")); n != d.Attempts {
				t.Fatalf("receiver got %d requests for %d attempts", n, d.Attempts)
			}
			if len(rcv.requests("/elsewhere")) != 0 {
				t.Fatal("a redirect was followed")
			}
		})
	}
}

// TestNonPublicTargetRefused proves the wiring of the SSRF guard: without
// private targets allowed, a delivery to a loopback receiver fails at once,
// at dial time, and the receiver gets nothing.
func TestNonPublicTargetRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rcv := newReceiver(t)
	e, _ := w.endpoint(rcv.url("/hook"), store.WebhookJSON)
	o := testOptions(w.st)
	o.AllowPrivateTargets = false
	run(t, o)
	w.note("one", "b")
	waitFor(t, 10*time.Second, "the delivery to fail", func() bool { return w.log(e)[0].State == store.DeliveryFailed })
	d := w.log(e)[0]
	if d.Attempts != 1 || !strings.Contains(d.LastError, "not a public internet address") || d.ResponseCode != nil {
		t.Fatalf("log row %+v", d)
	}
	if n := len(rcv.requests("/hook")); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}
