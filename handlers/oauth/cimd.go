package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/osfoundry/osfoundry/handlers/inbound"
	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

// A client_id that is an https URL names the client's metadata document.
const (
	fetchTimeout   = 5 * time.Second
	maxDocRedirect = 3
)

// IsMetadataDocumentURL reports whether a client_id is a metadata document URL.
func IsMetadataDocumentURL(clientID string) bool {
	return strings.HasPrefix(clientID, "https://") || strings.HasPrefix(clientID, "http://")
}

// checkDocumentURL: https, a path, no fragment, credentials or dot segments.
func (s *Server) checkDocumentURL(raw string) (*url.URL, error) {
	if len(raw) > 2048 {
		return nil, errors.New("is longer than 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, errors.New("is not a valid URL")
	}
	if !documentScheme(u, s.allowPrivate) {
		return nil, errors.New("must be an https URL")
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, errors.New("must not contain credentials or a fragment")
	}
	if u.Path == "" || u.Path == "/" {
		return nil, errors.New("must have a path")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, errors.New("must not contain . or .. path segments")
		}
	}
	return u, nil
}

// Anyone can make the server fetch a document with a signed-out GET
// /authorize: until approved it is held in memory only, and fetches are
// throttled per client address.
const (
	// unapprovedDocumentTTL holds a document for its consent page's answer.
	unapprovedDocumentTTL = 10 * time.Minute
	// maxUnapprovedDocuments bounds the documents held at once; the oldest go first.
	maxUnapprovedDocuments   = 500
	documentFetchesPerWindow = 10
	documentFetchWindow      = 10 * time.Minute
	// maxThrottledAddresses bounds the addresses the throttle remembers.
	maxThrottledAddresses = 10000
)

// metadataDocumentClient returns an approved client fetched within the hour, a
// held document, or a fresh fetch (an approved copy serves when that fails).
func (s *Server) metadataDocumentClient(ctx context.Context, clientID, from string) (*store.OAuthClient, error) {
	if !s.metadataDocuments {
		return nil, errors.New("this server does not accept client ID metadata documents (an https URL as client_id): its operator turned them off. " +
			"Register the client instead (dynamic client registration); for example, Codex does with --oauth-client-registration dcr")
	}
	u, err := s.checkDocumentURL(clientID)
	if err != nil {
		return nil, fmt.Errorf("client_id %s", err)
	}
	approved, err := s.store.GetOAuthClient(ctx, clientID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if approved != nil && !approved.IsMetadataDocument {
		return nil, errors.New("client_id is not a client ID metadata document")
	}
	now := s.now()
	if approved != nil && approved.FetchedAt != nil && now.Sub(*approved.FetchedAt) < metadataDocumentTTL {
		return approved, nil
	}
	if approved == nil {
		if cl := s.documents.get(clientID, now); cl != nil {
			return cl, nil
		}
	}
	if !s.fetches.allow(from, now) {
		s.log.Info("client id metadata document fetch throttled", "client_id", clientID, "from", from)
		if approved != nil {
			return approved, nil
		}
		return nil, fmt.Errorf("too many client ID metadata documents were fetched for your address in the last %d minutes; try again later", int(documentFetchWindow.Minutes()))
	}
	m, ferr := s.fetchDocument(ctx, u)
	if ferr != nil {
		s.log.Info("client id metadata document fetch failed", "client_id", clientID, "err", ferr)
		if approved != nil {
			return approved, nil
		}
		return nil, s.documentError(u, ferr)
	}
	stored, _ := json.Marshal(m)
	cl := &store.OAuthClient{ClientID: clientID, ClientName: m.ClientName, RedirectURIs: m.RedirectURIs, Metadata: stored,
		TokenEndpointAuthMethod: store.AuthMethodNone, IsMetadataDocument: true, FetchedAt: &now}
	if approved == nil {
		s.documents.put(cl, now)
		return cl, nil
	}
	if err := s.store.SaveMetadataDocumentClient(ctx, cl, now); err != nil {
		return nil, err
	}
	return cl, nil
}

// documentError says why a document is unusable, and what an operator can do.
func (s *Server) documentError(u *url.URL, err error) error {
	msg := fmt.Sprintf("the client's metadata document at %s could not be used: %v.", u, err)
	var se *documentProblem
	if errors.As(err, &se) {
		return errors.New(msg)
	}
	msg += fmt.Sprintf(" If this server cannot reach %s, its operator can turn client ID metadata documents off "+
		"(--client-metadata-documents=off), so that clients register instead", u.Host)
	if errors.Is(err, outbound.ErrNotPublic) && !s.allowPrivate {
		msg += ", or let it reach private addresses (--allow-private-targets) when the document is served on a private network"
	}
	return errors.New(msg + ".")
}

// documentProblem is the client's problem, not the server's reach.
type documentProblem struct{ msg string }

func (e *documentProblem) Error() string { return e.msg }

func problemf(format string, a ...any) error { return &documentProblem{fmt.Sprintf(format, a...)} }

// documentCache holds unapproved clients' documents, bounded in time and count.
type documentCache struct {
	mu      sync.Mutex
	entries map[string]cachedDocument
}

type cachedDocument struct {
	client  *store.OAuthClient
	expires time.Time
}

func (c *documentCache) get(clientID string, now time.Time) *store.OAuthClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[clientID]
	if !ok || !now.Before(e.expires) {
		return nil
	}
	cl := *e.client
	return &cl
}

// put holds cl, evicting expired entries, then the soonest to expire.
func (c *documentCache) put(cl *store.OAuthClient, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cachedDocument{}
	}
	if _, ok := c.entries[cl.ClientID]; !ok && len(c.entries) >= maxUnapprovedDocuments {
		oldest := ""
		for id, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, id)
			} else if oldest == "" || e.expires.Before(c.entries[oldest].expires) {
				oldest = id
			}
		}
		if len(c.entries) >= maxUnapprovedDocuments {
			delete(c.entries, oldest)
		}
	}
	held := *cl
	c.entries[cl.ClientID] = cachedDocument{client: &held, expires: now.Add(unapprovedDocumentTTL)}
}

// forget drops a document once its client is stored.
func (c *documentCache) forget(clientID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, clientID)
}

// len is how many documents are held.
func (c *documentCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// fetchThrottle bounds the document fetches of each client address.
type fetchThrottle struct {
	mu    sync.Mutex
	times map[string][]time.Time // per address, its fetches in the window, oldest first
}

func (f *fetchThrottle) allow(addr string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.times == nil {
		f.times = map[string][]time.Time{}
	}
	since := now.Add(-documentFetchWindow)
	recent := f.times[addr]
	for len(recent) > 0 && !recent[0].After(since) {
		recent = recent[1:]
	}
	if len(recent) >= documentFetchesPerWindow {
		f.times[addr] = recent
		return false
	}
	if _, ok := f.times[addr]; !ok && len(f.times) >= maxThrottledAddresses {
		for a, ts := range f.times {
			if len(ts) == 0 || !ts[len(ts)-1].After(since) {
				delete(f.times, a)
			}
		}
		if len(f.times) >= maxThrottledAddresses {
			return false // every remembered address is active: refuse newcomers until one quiets down
		}
	}
	f.times[addr] = append(recent, now)
	return true
}

// fetchDocument downloads and validates a client ID metadata document.
func (s *Server) fetchDocument(ctx context.Context, u *url.URL) (*clientMetadata, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "osFoundry")
	resp, err := s.fetch.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, problemf("HTTP status %d", resp.StatusCode)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "" && ct != "application/json" && !strings.HasSuffix(ct, "+json") {
		return nil, problemf("content type %q is not JSON", ct)
	}
	body, err := outbound.ReadBody(resp.Body, maxRegistrationBytes)
	if err != nil {
		return nil, problemf("%v", err)
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, problemf("the document is not a JSON object of client metadata")
	}
	var secret struct {
		ClientSecret *string `json:"client_secret"`
	}
	_ = json.Unmarshal(body, &secret)
	if m.ClientID != u.String() {
		return nil, problemf("its client_id %q is not the document's URL", truncate(m.ClientID, 200))
	}
	if secret.ClientSecret != nil {
		return nil, problemf("it must not contain a client_secret")
	}
	if e := m.validate(store.AuthMethodNone); e != nil {
		return nil, problemf("%s", e.Description)
	}
	if m.TokenEndpointAuthMethod != store.AuthMethodNone {
		return nil, problemf("token_endpoint_auth_method %q is not supported for metadata documents; use none", m.TokenEndpointAuthMethod)
	}
	return &m, nil
}

// newDocumentClient fetches documents through the guard, redialed on every
// redirect hop, each hop's scheme checked.
func newDocumentClient(o outbound.Options) *http.Client {
	o.Timeout = fetchTimeout
	o.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxDocRedirect {
			return errors.New("too many redirects")
		}
		if !documentScheme(req.URL, o.AllowPrivate) {
			return errors.New("redirect to a non-https URL")
		}
		return nil
	}
	return outbound.NewClient(o)
}

// documentScheme allows https, or http to loopback when private targets are
// allowed (a client under development).
func documentScheme(u *url.URL, allowPrivate bool) bool {
	return u.Scheme == "https" || (u.Scheme == "http" && allowPrivate && inbound.IsLoopbackHost(u.Hostname()))
}
