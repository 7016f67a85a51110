package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// tokenResponse is the RFC 6749 §5.1 answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

var verifierPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// VerifyPKCE checks a code verifier against an S256 challenge in constant time.
func VerifyPKCE(verifier, challenge string) bool {
	if !verifierPattern.MatchString(verifier) {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// form parses the body (never the query) and refuses repeated parameters.
func form(c echo.Context) (url.Values, *Error) {
	r := c.Request()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
		return nil, oauthError(http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		return nil, oauthError(http.StatusBadRequest, "invalid_request", "the body could not be parsed")
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return nil, oauthError(http.StatusBadRequest, "invalid_request", k+" is given more than once")
		}
		if !store.CleanText(k) || !store.CleanText(v[0]) {
			return nil, oauthError(http.StatusBadRequest, "invalid_request", strings.ToValidUTF8(strings.ReplaceAll(k, "\x00", ""), "?")+" contains invalid UTF-8 or a NUL character")
		}
	}
	return r.PostForm, nil
}

// authenticateClient applies none, client_secret_basic or client_secret_post.
func (s *Server) authenticateClient(c echo.Context, f url.Values) (*store.OAuthClient, *Error) {
	ctx := c.Request().Context()
	id, secret, basic := c.Request().BasicAuth()
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return nil, oauthError(http.StatusUnauthorized, "invalid_client", "the Authorization header is malformed")
		}
		if f.Get("client_secret") != "" {
			return nil, oauthError(http.StatusBadRequest, "invalid_request", "use one client authentication method, not two")
		}
		if fid := f.Get("client_id"); fid != "" && fid != id {
			return nil, oauthError(http.StatusUnauthorized, "invalid_client", "client_id does not match the Authorization header")
		}
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	invalid := oauthError(http.StatusUnauthorized, "invalid_client", "client authentication failed")
	if id == "" {
		return nil, oauthError(http.StatusUnauthorized, "invalid_client", "client_id is missing")
	}
	cl, err := s.store.GetOAuthClient(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalid
	}
	if err != nil {
		s.log.Error("oauth: client lookup failed", "err", err)
		return nil, oauthError(http.StatusInternalServerError, "server_error", "the server could not check the client; try again")
	}
	if cl.IsPublic() {
		// Some public clients send HTTP Basic with an empty password; a
		// secret is never accepted from a client registered without one.
		if secret != "" {
			return nil, invalid
		}
		return cl, nil
	}
	if !cl.CheckSecret(secret) {
		return nil, invalid
	}
	return cl, nil
}

// clientRequest reads a token or revocation form and authenticates its client.
func (s *Server) clientRequest(c echo.Context) (url.Values, *store.OAuthClient, *Error) {
	f, e := form(c)
	if e != nil {
		return nil, nil, e
	}
	cl, e := s.authenticateClient(c, f)
	if e != nil {
		return nil, nil, e
	}
	return f, cl, nil
}

// Token is the token endpoint: authorization_code and refresh_token grants.
func (s *Server) Token(c echo.Context) error {
	f, cl, e := s.clientRequest(c)
	if e != nil {
		return writeError(c, e)
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		return s.exchangeCode(c, cl, f)
	case "refresh_token":
		return s.refresh(c, cl, f)
	case "":
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_request", "grant_type is missing"))
	default:
		return writeError(c, oauthError(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token"))
	}
}

func invalidGrant(desc string) *Error {
	return oauthError(http.StatusBadRequest, "invalid_grant", desc)
}

func (s *Server) exchangeCode(c echo.Context, cl *store.OAuthClient, f url.Values) error {
	ctx := c.Request().Context()
	code, verifier, redirect := f.Get("code"), f.Get("code_verifier"), f.Get("redirect_uri")
	switch {
	case code == "":
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_request", "code is missing"))
	case verifier == "":
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_request", "code_verifier is missing (PKCE is required)"))
	case redirect == "":
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_request", "redirect_uri is missing; send the one used in the authorization request"))
	}
	if r := f.Get("resource"); r != "" && !s.matchResource(r) {
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_target", "resource must be "+s.Resource()))
	}
	now := s.now()
	ac, err := s.store.RedeemAuthCode(ctx, code, now)
	switch {
	case errors.Is(err, store.ErrReplay):
		s.log.Warn("authorization code reused: grant revoked", "client_id", cl.ClientID)
		return writeError(c, invalidGrant("the authorization code was already used; the grant has been revoked"))
	case errors.Is(err, store.ErrNotFound):
		return writeError(c, invalidGrant("the authorization code is unknown, expired or revoked"))
	case err != nil:
		return s.serverError(c, err)
	}
	switch {
	case ac.ClientID != cl.ClientID:
		return writeError(c, invalidGrant("the authorization code was issued to another client"))
	case !now.Before(ac.ExpiresAt):
		return writeError(c, invalidGrant("the authorization code has expired"))
	case ac.RedirectURI != redirect:
		return writeError(c, invalidGrant("redirect_uri does not match the authorization request"))
	case !VerifyPKCE(verifier, ac.CodeChallenge):
		return writeError(c, invalidGrant("code_verifier does not match the code_challenge"))
	case ac.Resource != s.Resource():
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_target", "the code was issued for another resource"))
	}
	access, _ := store.NewToken(store.AccessTokenPrefix)
	refresh, _ := store.NewToken(store.RefreshTokenPrefix)
	p := &store.TokenPair{ConnectionID: ac.ConnectionID, ClientID: ac.ClientID, AccessToken: access, RefreshToken: refresh, Resource: ac.Resource, Scopes: ac.Scopes}
	err = s.store.IssueTokens(ctx, p, now, lifetimes())
	if errors.Is(err, store.ErrNotFound) {
		return writeError(c, invalidGrant("the grant has been revoked"))
	}
	if err != nil {
		return s.serverError(c, err)
	}
	return s.writeTokens(c, p)
}

func (s *Server) refresh(c echo.Context, cl *store.OAuthClient, f url.Values) error {
	ctx := c.Request().Context()
	rt := f.Get("refresh_token")
	if rt == "" {
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_request", "refresh_token is missing"))
	}
	if r := f.Get("resource"); r != "" && !s.matchResource(r) {
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_target", "resource must be "+s.Resource()))
	}
	var asked []string
	if sc := f.Get("scope"); sc != "" {
		var err error
		if asked, err = ParseScope(sc); err != nil {
			return writeError(c, oauthError(http.StatusBadRequest, "invalid_scope", err.Error()))
		}
	}
	key, err := s.derivationKey(ctx)
	if err != nil {
		return s.serverError(c, err)
	}
	p, err := s.store.RotateRefreshToken(ctx, store.RefreshRequest{
		Token: rt, ClientID: cl.ClientID, Next: successor(key), Now: s.now(), Grace: RefreshGrace, Life: lifetimes(),
	})
	switch {
	case errors.Is(err, store.ErrReplay):
		s.log.Warn("refresh token reused after its grace window: grant revoked", "client_id", cl.ClientID)
		return writeError(c, invalidGrant("the refresh token was already used; the grant has been revoked"))
	case errors.Is(err, store.ErrNotFound):
		return writeError(c, invalidGrant("the refresh token is unknown, expired or revoked"))
	case err != nil:
		return s.serverError(c, err)
	}
	for _, sc := range asked {
		if !slices.Contains(p.Scopes, sc) {
			return writeError(c, oauthError(http.StatusBadRequest, "invalid_scope", "the grant does not include "+sc))
		}
	}
	return s.writeTokens(c, p)
}

func (s *Server) writeTokens(c echo.Context, p *store.TokenPair) error {
	exp := int64(p.AccessExpiresAt.Sub(s.now()).Seconds())
	if exp < 1 {
		exp = 1
	}
	return writeJSON(c, http.StatusOK, tokenResponse{
		AccessToken:  p.AccessToken,
		TokenType:    "Bearer",
		ExpiresIn:    exp,
		RefreshToken: p.RefreshToken,
		Scope:        strings.Join(p.Scopes, " "),
	})
}

// Revoke (RFC 7009) answers 200 for unknown tokens; a refresh token ends its grant.
func (s *Server) Revoke(c echo.Context) error {
	f, cl, e := s.clientRequest(c)
	if e != nil {
		return writeError(c, e)
	}
	tok := f.Get("token")
	if tok == "" {
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_request", "token is missing"))
	}
	if err := s.store.RevokeClientToken(c.Request().Context(), cl.ClientID, tok); err != nil {
		return s.serverError(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.NoContent(http.StatusOK)
}
