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
	"time"

	"github.com/osfoundry/osfoundry/handlers/inbound"
	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

// Client ID metadata documents: a client_id that is an https URL names a JSON
// document, published by the client, holding its metadata.
const (
	fetchTimeout   = 5 * time.Second
	maxDocRedirect = 3
)

// IsMetadataDocumentURL reports whether a client_id is a URL (and so must be
// resolved as a client ID metadata document) rather than a registered id.
func IsMetadataDocumentURL(clientID string) bool {
	return strings.HasPrefix(clientID, "https://") || strings.HasPrefix(clientID, "http://")
}

// checkDocumentURL applies the rules a client ID URL must follow: https (see
// documentScheme), a path, no fragment, no credentials, no dot segments.
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

// metadataDocumentClient returns the client a client ID URL names: from the
// database when fetched within the last hour, else fetched afresh (an older
// copy is still used when the fetch fails).
func (s *Server) metadataDocumentClient(ctx context.Context, clientID string) (*store.OAuthClient, error) {
	u, err := s.checkDocumentURL(clientID)
	if err != nil {
		return nil, fmt.Errorf("client_id %s", err)
	}
	cached, err := s.store.GetOAuthClient(ctx, clientID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if cached != nil && !cached.IsMetadataDocument {
		return nil, errors.New("client_id is not a client ID metadata document")
	}
	now := s.now()
	if cached != nil && cached.FetchedAt != nil && now.Sub(*cached.FetchedAt) < metadataDocumentTTL {
		return cached, nil
	}
	m, ferr := s.fetchDocument(ctx, u)
	if ferr != nil {
		s.log.Info("client id metadata document fetch failed", "client_id", clientID, "err", ferr)
		if cached != nil {
			return cached, nil
		}
		return nil, fmt.Errorf("the client's metadata document at %s could not be used: %v", clientID, ferr)
	}
	stored, _ := json.Marshal(m)
	cl := &store.OAuthClient{ClientID: clientID, ClientName: m.ClientName, RedirectURIs: m.RedirectURIs, Metadata: stored}
	if err := s.store.SaveMetadataDocumentClient(ctx, cl, now); err != nil {
		return nil, err
	}
	return cl, nil
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
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "" && ct != "application/json" && !strings.HasSuffix(ct, "+json") {
		return nil, fmt.Errorf("content type %q is not JSON", ct)
	}
	body, err := outbound.ReadBody(resp.Body, maxRegistrationBytes)
	if err != nil {
		return nil, err
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errors.New("the document is not a JSON object of client metadata")
	}
	var secret struct {
		ClientSecret *string `json:"client_secret"`
	}
	_ = json.Unmarshal(body, &secret)
	if m.ClientID != u.String() {
		return nil, fmt.Errorf("its client_id %q is not the document's URL", truncate(m.ClientID, 200))
	}
	if secret.ClientSecret != nil {
		return nil, errors.New("it must not contain a client_secret")
	}
	if e := m.validate(store.AuthMethodNone); e != nil {
		return nil, errors.New(e.Description)
	}
	if m.TokenEndpointAuthMethod != store.AuthMethodNone {
		return nil, fmt.Errorf("token_endpoint_auth_method %q is not supported for metadata documents; use none", m.TokenEndpointAuthMethod)
	}
	return &m, nil
}

// newDocumentClient is the client that fetches metadata documents: guarded by
// o (public addresses only unless o.AllowPrivate), within fetchTimeout, and
// following at most maxDocRedirect redirects, each to a URL whose scheme
// documentScheme accepts. Every hop is dialed through the guard again.
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

// documentScheme is the scheme rule for a metadata document and each redirect
// on the way to it: https, or plain http to a loopback host when the operator
// allows private targets (a client under development serving its document
// locally).
func documentScheme(u *url.URL, allowPrivate bool) bool {
	return u.Scheme == "https" || (u.Scheme == "http" && allowPrivate && inbound.IsLoopbackHost(u.Hostname()))
}
