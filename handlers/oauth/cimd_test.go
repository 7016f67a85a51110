package oauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/osfoundry/osfoundry/outbound"
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
		_, err := strict.LookupClient(ctx, u)
		var ae *AuthorizeError
		if !errors.As(err, &ae) || ae.Code != "invalid_client" {
			t.Fatalf("%s without the flag: %v", u, err)
		}
	}
	_, err := strict.LookupClient(ctx, tlsDocs.URL+"/client.json")
	if err == nil || !strings.Contains(err.Error(), "not a public internet address") {
		t.Fatalf("https loopback document without the flag: %v, want the guard's refusal", err)
	}
	if n := tlsDocs.hits.Load() + docs.hits.Load(); n != 0 {
		t.Fatalf("the document servers were reached %d times", n)
	}

	cl, err := New(Options{Store: st, BaseURL: "http://127.0.0.1:8080", AllowPrivateTargets: true}).LookupClient(ctx, docs.URL+"/client.json")
	if err != nil || cl.ClientName != "Local client" {
		t.Fatalf("loopback document with the flag: %+v %v", cl, err)
	}
}
