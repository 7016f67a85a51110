package oauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// docServer is a loopback server of metadata documents that counts requests.
type docServer struct {
	*httptest.Server
	hits atomic.Int32
}

func newDocServer(t *testing.T, tlsOn bool, h http.HandlerFunc) *docServer {
	t.Helper()
	d := &docServer{}
	hf := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		h(w, r)
	})
	if tlsOn {
		d.Server = httptest.NewTLSServer(hf)
	} else {
		d.Server = httptest.NewServer(hf)
	}
	t.Cleanup(d.Close)
	return d
}

func (d *docServer) addrPort() netip.AddrPort {
	return netip.MustParseAddrPort(d.Listener.Addr().String())
}

// serveDoc answers with a valid metadata document for the requested URL.
func serveDoc(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck
		"client_id": scheme + "://" + r.Host + r.URL.Path, "client_name": "Local client",
		"redirect_uris": []string{"http://localhost/callback"}, "token_endpoint_auth_method": "none",
	})
}

func TestDocumentClientRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	srv := newDocServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "http://example.com/client.json", http.StatusFound)
			return
		}
		serveDoc(w, r)
	})
	// Without the operator's flag, loopback (like every non-public address) is refused at dial time.
	if _, err := newDocumentClient(outbound.Options{}).Get(srv.URL + "/client.json"); !errors.Is(err, outbound.ErrNotPublic) {
		t.Fatalf("loopback fetch without the flag: %v", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("the refused server was reached %d times", n)
	}
	// With it, loopback is reachable, but a redirect to plain http elsewhere is not followed.
	resp, err := newDocumentClient(outbound.Options{AllowPrivate: true}).Get(srv.URL + "/client.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := newDocumentClient(outbound.Options{AllowPrivate: true}).Get(srv.URL + "/hop"); err == nil || !strings.Contains(err.Error(), "non-https") {
		t.Fatalf("redirect to plain http: %v", err)
	}
}

// TestDocumentRedirectHopIsGuarded: one exact loopback address:port is
// allowed (the document's host); its https redirect to another loopback
// server passes the redirect rules and is refused by the guard at dial time.
func TestDocumentRedirectHopIsGuarded(t *testing.T) {
	t.Parallel()
	other := newDocServer(t, true, serveDoc)
	var allowed *docServer
	allowed = newDocServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hop":
			http.Redirect(w, r, other.URL+"/client.json", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, allowed.URL+"/loop", http.StatusFound)
		default:
			serveDoc(w, r)
		}
	})
	c := newDocumentClient(outbound.Options{Allow: []netip.AddrPort{allowed.addrPort()}})
	roots := x509.NewCertPool()
	roots.AddCert(allowed.Certificate())
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: roots}

	resp, err := c.Get(allowed.URL + "/client.json")
	if err != nil {
		t.Fatalf("the allowed address: %v", err)
	}
	resp.Body.Close()
	if _, err := c.Get(allowed.URL + "/hop"); !errors.Is(err, outbound.ErrNotPublic) {
		t.Fatalf("redirect to another loopback server: %v, want ErrNotPublic", err)
	}
	if n := other.hits.Load(); n != 0 {
		t.Fatalf("the redirect target was reached %d times", n)
	}
	if _, err := c.Get(allowed.URL + "/loop"); err == nil || !strings.Contains(err.Error(), "too many redirects") {
		t.Fatalf("redirect loop: %v", err)
	}
}

// TestMetadataDocumentOnLoopbackNeedsTheFlag: a server that itself runs on
// loopback fetches no document from a non-public address (an https one is
// refused at dial time, a plain http one by its scheme) unless the operator
// allows private targets.
func TestMetadataDocumentOnLoopbackNeedsTheFlag(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	tlsDocs := newDocServer(t, true, serveDoc)
	docs := newDocServer(t, false, serveDoc)
	ctx := context.Background()
	strict := New(Options{Store: st, BaseURL: "http://127.0.0.1:8080"})

	for _, u := range []string{tlsDocs.URL + "/client.json", docs.URL + "/client.json"} {
		_, err := strict.LookupClient(ctx, u, "127.0.0.1")
		var ae *AuthorizeError
		if !errors.As(err, &ae) || ae.Code != "invalid_client" {
			t.Fatalf("%s without the flag: %v", u, err)
		}
	}
	_, err := strict.LookupClient(ctx, tlsDocs.URL+"/client.json", "127.0.0.1")
	if err == nil || !strings.Contains(err.Error(), "not a public internet address") {
		t.Fatalf("https loopback document without the flag: %v, want the guard's refusal", err)
	}
	if n := tlsDocs.hits.Load() + docs.hits.Load(); n != 0 {
		t.Fatalf("the document servers were reached %d times", n)
	}

	cl, err := New(Options{Store: st, BaseURL: "http://127.0.0.1:8080", AllowPrivateTargets: true}).LookupClient(ctx, docs.URL+"/client.json", "127.0.0.1")
	if err != nil || cl.ClientName != "Local client" {
		t.Fatalf("loopback document with the flag: %+v %v", cl, err)
	}
}

// TestDocumentCacheIsBounded: the documents held for consent pages never
// exceed maxUnapprovedDocuments, expire after unapprovedDocumentTTL, and
// the newest one always gets a place.
func TestDocumentCacheIsBounded(t *testing.T) {
	t.Parallel()
	var c documentCache
	now := time.Now()
	for i := range maxUnapprovedDocuments + 100 {
		c.put(&store.OAuthClient{ClientID: fmt.Sprintf("https://c.example/%d.json", i)}, now.Add(time.Duration(i)*time.Millisecond))
	}
	last := now.Add(time.Duration(maxUnapprovedDocuments+99) * time.Millisecond)
	if n := c.len(); n != maxUnapprovedDocuments {
		t.Fatalf("%d documents held, want %d", n, maxUnapprovedDocuments)
	}
	if c.get(fmt.Sprintf("https://c.example/%d.json", maxUnapprovedDocuments+99), last) == nil || c.get("https://c.example/0.json", last) != nil {
		t.Fatal("the newest document must stay and the oldest go")
	}
	if c.get(fmt.Sprintf("https://c.example/%d.json", maxUnapprovedDocuments+99), last.Add(unapprovedDocumentTTL)) != nil {
		t.Fatal("a document outlived its TTL")
	}
}

// TestFetchThrottleWindow: an address gets documentFetchesPerWindow fetches
// per documentFetchWindow; others are not affected; the window slides.
func TestFetchThrottleWindow(t *testing.T) {
	t.Parallel()
	var f fetchThrottle
	now := time.Now()
	for i := range documentFetchesPerWindow {
		if !f.allow("192.0.2.1", now.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("fetch %d refused", i)
		}
	}
	if f.allow("192.0.2.1", now.Add(time.Minute)) {
		t.Fatal("a fetch beyond the limit was allowed")
	}
	if !f.allow("192.0.2.2", now.Add(time.Minute)) {
		t.Fatal("another address was throttled")
	}
	if !f.allow("192.0.2.1", now.Add(documentFetchWindow+time.Second)) {
		t.Fatal("the window did not slide")
	}
}
