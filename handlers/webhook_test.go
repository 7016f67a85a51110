package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/webhook"
)

// runSender runs a webhook sender on the app's database, woken by a
// listener of its own, with private targets allowed (receivers are on loopback).
func (a *testApp) runSender() {
	a.t.Helper()
	quiet := a.h.log
	s := webhook.New(webhook.Options{Store: a.store, BaseURL: a.srv.URL, Logger: quiet, AllowPrivateTargets: true,
		Sweep: 200 * time.Millisecond, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	l := a.store.NewListener(quiet)
	s.WakeOn(l)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); l.Run(ctx) }()
	go func() { defer wg.Done(); s.Run(ctx) }()
	a.t.Cleanup(func() { cancel(); wg.Wait() })
	<-l.Ready()
}

// hookReceiver records the requests it gets.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []*http.Request
	bod [][]byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.bod = append(r.got, req), append(r.bod, b)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func TestWebhookSettingsPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	p := alice.project("Storefront")
	base := fmt.Sprintf("/projects/%d/webhooks", p.ID)

	// The project page links to its webhooks; the page starts empty.
	doc := alice.doc(alice.get(fmt.Sprintf("/projects/%d", p.ID)), http.StatusOK)
	if href, _ := doc.Find(`[data-testid="project-webhooks"]`).Attr("href"); href != base {
		t.Fatalf("project page links to %q, want %q", href, base)
	}
	doc = alice.doc(alice.get(base), http.StatusOK)
	if doc.Find(`[data-testid="no-webhooks"]`).Length() != 1 || doc.Find(`[data-testid="webhook-create-form"] input[name="_csrf"]`).Length() != 1 {
		t.Fatal("empty Webhooks page without the empty state or a CSRF field")
	}

	// Bad input is refused on the form, by field name, with the values kept.
	valid := url.Values{"url": {"https://hooks.example.com/x"}, "kind": {"json"}, "fires": {"agents"}}
	for _, tc := range []struct {
		name, field, value, error string
	}{
		{"not a URL", "url", "hooks dot example", "url"},
		{"not http", "url", "ftp://hooks.example.com/x", "url"},
		{"over 2 KiB", "url", "https://hooks.example.com/" + strings.Repeat("x", 2048), "url"},
		{"userinfo", "url", "https://bot:hunter2@hooks.example.com/x", "url"},
		{"unknown kind", "kind", "xml", "kind"},
		{"unknown fires", "fires", "analysis", "fires"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{}
			for k, v := range valid {
				form[k] = v
			}
			form.Set(tc.field, tc.value)
			doc := alice.doc(alice.post(base, form), http.StatusUnprocessableEntity)
			msg := doc.Find(`[data-testid="error-` + tc.error + `"]`)
			if msg.Length() != 1 || strings.TrimSpace(msg.Text()) == "" {
				t.Fatalf("no message for %s", tc.error)
			}
			if doc.Find(`[data-testid^="error-"]`).Length() != 1 {
				t.Fatal("more than one field refused")
			}
			if v, _ := doc.Find(`input[name="url"]`).Attr("value"); v != form.Get("url") {
				t.Fatalf("the URL was not kept: %q", v)
			}
			if inv, _ := doc.Find(`input[name="url"]`).Attr("aria-invalid"); (inv == "true") != (tc.error == "url") {
				t.Fatalf("url aria-invalid %q", inv)
			}
		})
	}
	if doc := alice.doc(alice.get(base), http.StatusOK); doc.Find(`[data-testid="webhook-item"]`).Length() != 0 {
		t.Fatal("a refused form added an endpoint")
	}

	// Added: the form redirects to the endpoint's page, which shows the
	// secret once; reloading that page shows it no more and adds nothing.
	rcv := newHookReceiver(t)
	res := alice.post(base, url.Values{"url": {rcv.URL + "/hook"}, "kind": {"json"}, "fires": {"all"}})
	res.Body.Close()
	hookPath := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(hookPath, base+"/") {
		t.Fatalf("POST %s: %d to %q, want 303 to the endpoint's page", base, res.StatusCode, hookPath)
	}
	doc = alice.doc(alice.get(hookPath), http.StatusOK)
	secret, _ := doc.Find(`[data-testid="webhook-secret-value"]`).Attr("value")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	if got := doc.Find(`[data-testid="webhook-url"]`).Text(); got != rcv.URL+"/hook" {
		t.Fatalf("endpoint page shows %q", got)
	}
	if doc.Find(`[data-testid="no-deliveries"]`).Length() != 1 {
		t.Fatal("a new endpoint's log is not empty")
	}
	doc = alice.doc(alice.get(base), http.StatusOK)
	item := doc.Find(`[data-testid="webhook-item"]`)
	if link, _ := item.Find(`[data-testid="webhook-link"]`).Attr("href"); item.Length() != 1 || item.Find(`[data-testid="webhook-enabled"]`).Length() != 1 || link != hookPath {
		t.Fatalf("list: %d items, link %q", item.Length(), link)
	}
	if doc := alice.doc(alice.get(hookPath), http.StatusOK); doc.Find(`[data-testid="webhook-secret"]`).Length() != 0 ||
		strings.Contains(doc.Text(), secret) {
		t.Fatal("the secret is shown again")
	}

	// Send test: queued, the page shows it in the log; a sender delivers it,
	// signed with that secret.
	res = alice.post(hookPath+"/test", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != hookPath {
		t.Fatalf("send test: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	doc = alice.doc(alice.get(hookPath), http.StatusOK)
	row := doc.Find(`[data-testid="delivery"]`)
	if row.Length() != 1 || strings.TrimSpace(row.Find(`[data-testid="delivery-event"]`).Text()) != "Test" ||
		row.Find(`[data-testid="delivery-state"]`).Text() != "waiting" {
		t.Fatalf("log after send test: %q", row.Text())
	}
	if hx, _ := doc.Find(`#delivery-log`).Attr("hx-get"); hx != hookPath+"/log" {
		t.Fatalf("a log with a waiting delivery does not refresh itself (hx-get %q)", hx)
	}
	app.runSender()
	var frag *goquery.Document
	deadline := time.Now().Add(10 * time.Second)
	for {
		frag = alice.doc(alice.htmx(hookPath+"/log"), http.StatusOK)
		if frag.Find(`[data-testid="delivery-state"]`).Text() == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not delivered: %q", frag.Text())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.TrimSpace(frag.Find(`[data-testid="delivery-response"]`).Text()) != "204" || frag.Find(`#delivery-log[hx-get]`).Length() != 0 ||
		strings.TrimSpace(frag.Find(`[data-testid="delivery-attempts"]`).Text()) != "1" || frag.Find("header").Length() != 0 {
		t.Fatalf("log fragment after delivery: %q", frag.Text())
	}
	rcv.mu.Lock()
	req, body := rcv.got[0], rcv.bod[0]
	rcv.mu.Unlock()
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), body)
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); req.Header.Get("webhook-signature") != want {
		t.Fatalf("signature %q, want %q", req.Header.Get("webhook-signature"), want)
	}

	// Disabled: no Send test; a test posted anyway is refused on the page.
	if res := alice.post(hookPath+"/disable", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d", res.StatusCode)
	}
	doc = alice.doc(alice.get(hookPath), http.StatusOK)
	if doc.Find(`[data-testid="webhook-send-test"]`).Length() != 0 || doc.Find(`[data-testid="webhook-enable"]`).Length() != 1 {
		t.Fatal("a disabled endpoint's page offers Send test or no Enable")
	}
	doc = alice.doc(alice.post(hookPath+"/test", nil), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="error-endpoint"]`).Length() != 1 {
		t.Fatal("a test of a disabled endpoint was not refused on the page")
	}
	if res := alice.post(hookPath+"/enable", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("enable: %d", res.StatusCode)
	}
	if doc := alice.doc(alice.get(hookPath), http.StatusOK); doc.Find(`[data-testid="webhook-send-test"]`).Length() != 1 {
		t.Fatal("enabled again without Send test")
	}

	// Deleted: gone from the list, its page is a 404.
	res = alice.post(hookPath+"/delete", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != base {
		t.Fatalf("delete: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if doc := alice.doc(alice.get(base), http.StatusOK); doc.Find(`[data-testid="no-webhooks"]`).Length() != 1 {
		t.Fatal("the deleted endpoint is still listed")
	}
	alice.doc(alice.get(hookPath), http.StatusNotFound)
	if n := rcv.count(); n != 1 {
		t.Fatalf("the receiver got %d requests, want the one test", n)
	}
}
