package oauth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/handlers"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// documents serves a valid client ID metadata document at every path and
// counts the fetches.
func documents(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck
			"client_id": "http://" + r.Host + r.URL.Path, "client_name": "Doc client " + r.URL.Path,
			"redirect_uris": []string{"http://localhost/callback"}, "token_endpoint_auth_method": "none",
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// clients counts the stored OAuth clients.
func (e *env) clients() int {
	e.t.Helper()
	var n int
	if err := storetest.SQL(e.t, e.st).QueryRow(`SELECT count(*) FROM oauth_clients`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestMetadataDocumentsAreThrottledAndHeldUntilApproved: signed-out GET
// /authorize with 15 distinct client_id URLs from one address fetches 10
// documents (the rest are refused with a reason) and stores no client; a
// document is stored as a client only once an owner approves it, and the
// consent page after sign-in needs no second fetch.
func TestMetadataDocumentsAreThrottledAndHeldUntilApproved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	docs, hits := documents(t)
	_, challenge := pkce("d")
	redirect := "http://localhost:61000/callback"
	throttled := 0
	for i := range 15 {
		resp, d := e.consent(e.authParams(fmt.Sprintf("%s/client-%d.json", docs.URL, i), redirect, challenge))
		switch {
		case resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(resp.Header.Get("Location"), "/login"):
		case resp.StatusCode == http.StatusBadRequest && strings.Contains(d.Find(`[data-testid="authorize-error-message"]`).Text(), "too many client ID metadata documents"):
			throttled++
		default:
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, d.Find("main").Text())
		}
	}
	if n := hits.Load(); n != 10 || throttled != 5 {
		t.Fatalf("%d fetches and %d refusals for 15 documents, want 10 and 5", n, throttled)
	}
	if n := e.clients(); n != 0 {
		t.Fatalf("%d clients stored for documents no owner approved", n)
	}

	// The owner signs in and approves one: its document, still held, is
	// stored as a client then, and the code exchange works.
	e.signIn()
	verifier, challenge := pkce("a")
	docURL := docs.URL + "/client-3.json"
	resp, d := e.consent(e.authParams(docURL, redirect, challenge))
	if resp.StatusCode != http.StatusOK || d.Find(`[data-testid="consent-client-name"]`).Text() != "Doc client /client-3.json" {
		t.Fatalf("consent: %d %s", resp.StatusCode, d.Find("main").Text())
	}
	if n := e.clients(); n != 0 {
		t.Fatalf("%d clients stored before the approval", n)
	}
	loc := e.decide(d, "approve", []string{store.ScopeRead, store.ScopeWrite}, nil)
	if r, tok := e.exchange(docURL, loc.Query().Get("code"), verifier, redirect); r.StatusCode != http.StatusOK {
		t.Fatalf("exchange: %d %v", r.StatusCode, tok)
	}
	if n, f := e.clients(), hits.Load(); n != 1 || f != 10 {
		t.Fatalf("after the approval: %d clients, %d fetches; want 1 and still 10", n, f)
	}
}

// TestUngrantedClientsArePruned: a day after it was stored, a client that
// no connection, code or refresh token names is deleted when the next
// registration comes; granted ones stay.
func TestUngrantedClientsArePruned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	granted, _ := e.fullGrant()
	ungranted := e.registerPublic("http://127.0.0.1/cb")
	e.clock.Advance(25 * time.Hour)
	fresh := e.registerPublic("http://127.0.0.1/cb")
	for id, want := range map[string]bool{granted: true, ungranted: false, fresh: true} {
		var n int
		if err := storetest.SQL(e.t, e.st).QueryRow(`SELECT count(*) FROM oauth_clients WHERE client_id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if (n == 1) != want {
			t.Errorf("client %s: stored %v, want %v", id, n == 1, want)
		}
	}
}

// TestMetadataDocumentSwitch: with --client-metadata-documents=off the
// server stops advertising client_id_metadata_document_supported, refuses a
// URL client_id with a sentence saying to register instead (fetching
// nothing), and dynamic registration still works.
func TestMetadataDocumentSwitch(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *handlers.Config) { c.NoClientMetadataDocuments = true })
	_, m := e.answer(e.api.Get(e.base + "/.well-known/oauth-authorization-server"))
	if v, ok := m["client_id_metadata_document_supported"]; !ok || v != false {
		t.Fatalf("client_id_metadata_document_supported = %v (present %v), want false", v, ok)
	}
	docs, hits := documents(t)
	_, challenge := pkce("s")
	resp, d := e.consent(e.authParams(docs.URL+"/client.json", "http://localhost:61000/callback", challenge))
	msg := d.Find(`[data-testid="authorize-error-message"]`).Text()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, "does not accept client ID metadata documents") ||
		!strings.Contains(msg, "Register the client instead") || hits.Load() != 0 {
		t.Fatalf("%d %q, %d fetches", resp.StatusCode, msg, hits.Load())
	}
	e.fullGrant()

	// On by default.
	_, m = e.answer(newEnv(t).api.Get(newEnv(t).base + "/.well-known/oauth-authorization-server"))
	if m["client_id_metadata_document_supported"] != true {
		t.Fatalf("default: %v", m["client_id_metadata_document_supported"])
	}
}

// TestUnreachableDocumentSaysWhatTheOperatorCanDo: a document the server
// may not fetch (on loopback, private targets not allowed) fails the
// consent page with what the operator can do: turn documents off, or allow
// private targets.
func TestUnreachableDocumentSaysWhatTheOperatorCanDo(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *handlers.Config) { c.AllowPrivateTargets = false })
	docs, hits := documents(t)
	_, challenge := pkce("u")
	// https, so that the scheme passes and the address is what refuses it.
	docURL := strings.Replace(docs.URL, "http://", "https://", 1) + "/client.json"
	resp, d := e.consent(e.authParams(docURL, "http://localhost:61000/callback", challenge))
	msg := d.Find(`[data-testid="authorize-error-message"]`).Text()
	for _, want := range []string{"could not be used", "--client-metadata-documents=off", "--allow-private-targets"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %q", want, msg)
		}
	}
	if resp.StatusCode != http.StatusBadRequest || hits.Load() != 0 {
		t.Fatalf("%d, %d fetches", resp.StatusCode, hits.Load())
	}
}
