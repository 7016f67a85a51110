package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/osfoundry/osfoundry/store"
)

// AuthorizeParams are the request's parameters the consent form carries back.
var AuthorizeParams = []string{"client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "scope", "resource"}

// AuthRequest is a validated authorization request.
type AuthRequest struct {
	Client        *store.OAuthClient
	RedirectURI   string
	State         string
	CodeChallenge string
	Resource      string
	// Scopes are the requested scopes this server knows, canonical order.
	Scopes []string
	// Params are the original parameters, for the consent form's hidden fields.
	Params url.Values
}

// ClientName is the client's unverified name, cleaned of what a display name may not hold.
func (a *AuthRequest) ClientName() string {
	if name := strings.TrimSpace(store.DisplayableName(a.Client.ClientName)); name != "" {
		return name
	}
	if a.Client.IsMetadataDocument {
		if u, err := url.Parse(a.Client.ClientID); err == nil {
			return u.Host
		}
	}
	return "Unnamed client"
}

// RedirectHost is where the browser goes after the decision, for the consent page.
func (a *AuthRequest) RedirectHost() string { return redirectHost(a.RedirectURI) }

// RedirectScheme is the redirect URI's scheme, which the consent form may go to.
func (a *AuthRequest) RedirectScheme() string {
	if u, err := url.Parse(a.RedirectURI); err == nil {
		return strings.ToLower(u.Scheme)
	}
	return ""
}

// AuthorizeError is a refused request: sent back to the client when RedirectURI
// is set, else shown as a page because the target itself is in doubt.
type AuthorizeError struct {
	Code        string
	Description string
	RedirectURI string
	State       string
}

func (e *AuthorizeError) Error() string { return e.Code + ": " + e.Description }

// Redirectable reports whether the error may be sent to the client's redirect URI.
func (e *AuthorizeError) Redirectable() bool { return e.RedirectURI != "" }

// ErrorRedirect is the URL that reports e to the client.
func (s *Server) ErrorRedirect(e *AuthorizeError) string {
	return withParams(e.RedirectURI, url.Values{
		"error": {e.Code}, "error_description": {e.Description}, "state": {e.State}, "iss": {s.issuer},
	})
}

var codeChallengePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// ParseAuthorizeRequest validates a request; client and redirect URI errors are
// not redirectable, later ones are a redirectable *AuthorizeError.
func (s *Server) ParseAuthorizeRequest(ctx context.Context, q url.Values, from string) (*AuthRequest, error) {
	for _, k := range AuthorizeParams {
		if len(q[k]) > 1 {
			return nil, &AuthorizeError{Code: "invalid_request", Description: k + " is given more than once"}
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return nil, &AuthorizeError{Code: "invalid_request", Description: "client_id is missing"}
	}
	client, err := s.LookupClient(ctx, clientID, from)
	if err != nil {
		return nil, err
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		return nil, &AuthorizeError{Code: "invalid_request", Description: "redirect_uri is missing"}
	}
	if !MatchRedirectURI(client.RedirectURIs, redirect) {
		return nil, &AuthorizeError{Code: "invalid_request", Description: "redirect_uri is not registered for this client"}
	}
	ar := &AuthRequest{Client: client, RedirectURI: redirect, State: q.Get("state"), Params: url.Values{}}
	for _, k := range AuthorizeParams {
		if v := q.Get(k); v != "" {
			ar.Params.Set(k, v)
		}
	}
	fail := func(code, desc string) (*AuthRequest, error) {
		return nil, &AuthorizeError{Code: code, Description: desc, RedirectURI: redirect, State: ar.State}
	}
	if rt := q.Get("response_type"); rt != "code" {
		return fail("unsupported_response_type", "response_type must be code")
	}
	switch q.Get("code_challenge_method") {
	case "S256":
	case "":
		return fail("invalid_request", "code_challenge_method S256 is required (PKCE)")
	default:
		return fail("invalid_request", "code_challenge_method must be S256; plain is not allowed")
	}
	ar.CodeChallenge = q.Get("code_challenge")
	if !codeChallengePattern.MatchString(ar.CodeChallenge) {
		return fail("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code verifier")
	}
	ar.Resource = q.Get("resource")
	if ar.Resource == "" {
		return fail("invalid_target", "resource is required and must be "+s.Resource())
	}
	if !s.matchResource(ar.Resource) {
		return fail("invalid_target", "resource must be "+s.Resource())
	}
	ar.Resource = s.Resource()
	scopes, err := ParseScope(q.Get("scope"))
	if err != nil {
		return fail("invalid_scope", err.Error())
	}
	// Read is always granted: the MCP SDKs ask for the refused tool's scope alone,
	// and RFC 6749 §3.3 lets the server grant other scopes than requested.
	ar.Scopes, _ = store.ValidateScopes(append(scopes, store.ScopeRead))
	return ar, nil
}

// ParseScope reads a scope parameter; unknown scopes but offline_access are an
// error, and empty means every scope.
func ParseScope(scope string) ([]string, error) {
	var want []string
	for _, sc := range strings.Fields(scope) {
		switch {
		case sc == "offline_access":
		case slices.Contains(store.AllScopes, sc):
			want = append(want, sc)
		default:
			return nil, fmt.Errorf("unknown scope %q; use %s", sc, strings.Join(store.AllScopes, " and/or "))
		}
	}
	if len(want) == 0 {
		return slices.Clone(store.AllScopes), nil
	}
	return store.ValidateScopes(want)
}

// LookupClient returns a registered client or a client ID metadata document;
// an unusable one is a non-redirectable *AuthorizeError.
func (s *Server) LookupClient(ctx context.Context, clientID, from string) (*store.OAuthClient, error) {
	if IsMetadataDocumentURL(clientID) {
		cl, err := s.metadataDocumentClient(ctx, clientID, from)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, &AuthorizeError{Code: "invalid_client", Description: err.Error()}
		}
		return cl, nil
	}
	cl, err := s.store.GetOAuthClient(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && cl.IsMetadataDocument) {
		return nil, &AuthorizeError{Code: "invalid_client", Description: "this client is not registered with this server (it may have been registered with another osFoundry); remove and add the server again in your client"}
	}
	return cl, err
}

// Approval is the owner's decision on the consent page.
type Approval struct {
	Owner *store.Owner
	// Scopes granted: a non-empty subset of the requested ones.
	Scopes     []string
	ProjectIDs []int64
	// Continue is the connection to sign in again as; 0 connects a new agent.
	Continue int64
	// InviteSessionIDs are sessions to invite the agent to, as a contributor.
	InviteSessionIDs []int64
	// RemoteAddr and UserAgent are the approving browser's, for the audit log.
	RemoteAddr, UserAgent string
}

// Approve records the grant, issues a code and returns the redirect URL; the
// store checks that the client may continue the chosen connection.
func (s *Server) Approve(ctx context.Context, ar *AuthRequest, ap Approval) (string, error) {
	var granted []string
	for _, sc := range ap.Scopes {
		if slices.Contains(ar.Scopes, sc) {
			granted = append(granted, sc)
		}
	}
	if len(granted) == 0 {
		return "", &store.FieldError{Field: "scope", Message: "choose at least one permission"}
	}
	clientID := ar.Client.ClientID
	if cl := ar.Client; cl.IsMetadataDocument {
		// A client known by its document is stored once an owner approves it.
		fetched := s.now()
		if cl.FetchedAt != nil {
			fetched = *cl.FetchedAt
		}
		if err := s.store.SaveMetadataDocumentClient(ctx, cl, fetched); err != nil {
			return "", err
		}
		s.documents.forget(clientID)
	}
	conn, err := s.store.GrantConnection(ctx, store.NewConnection{
		WorkspaceID:      ap.Owner.WorkspaceID,
		OwnerID:          ap.Owner.ID,
		ClientID:         &clientID,
		ClientName:       ar.ClientName(),
		Scopes:           granted,
		ProjectIDs:       ap.ProjectIDs,
		Continue:         ap.Continue,
		InviteSessionIDs: ap.InviteSessionIDs,
		RemoteAddr:       ap.RemoteAddr,
		UserAgent:        ap.UserAgent,
	})
	if err != nil {
		return "", err
	}
	code, hash := store.NewToken("osf_ac_")
	err = s.store.CreateAuthCode(ctx, &store.AuthCode{
		CodeHash:      hash,
		ConnectionID:  conn.ID,
		ClientID:      clientID,
		RedirectURI:   ar.RedirectURI,
		CodeChallenge: ar.CodeChallenge,
		Resource:      ar.Resource,
		Scopes:        conn.Scopes,
		ExpiresAt:     s.now().Add(CodeTTL),
	})
	if err != nil {
		return "", err
	}
	s.log.Info("oauth grant approved", "connection_id", conn.ID, "client_id", clientID, "scopes", conn.Scopes, "continued", ap.Continue != 0)
	return withParams(ar.RedirectURI, url.Values{"code": {code}, "state": {ar.State}, "iss": {s.issuer}}), nil
}

// Deny returns the redirect URL telling the client the owner said no.
func (s *Server) Deny(ar *AuthRequest) string {
	return s.ErrorRedirect(&AuthorizeError{Code: "access_denied", Description: "the owner denied the request", RedirectURI: ar.RedirectURI, State: ar.State})
}
