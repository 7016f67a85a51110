package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// maxRedirectURIs is how many redirect URIs one client may register.
const maxRedirectURIs = 20

// clientMetadata is the RFC 7591 metadata this server reads.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

// validate checks the metadata and fills defaults.
func (m *clientMetadata) validate(defaultAuth string) *Error {
	bad := func(field, msg string) *Error {
		return oauthError(http.StatusBadRequest, "invalid_client_metadata", field+": "+msg)
	}
	if len(m.RedirectURIs) == 0 {
		return oauthError(http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris: at least one redirect URI is required")
	}
	if len(m.RedirectURIs) > maxRedirectURIs {
		return oauthError(http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("redirect_uris: at most %d redirect URIs", maxRedirectURIs))
	}
	for i, u := range m.RedirectURIs {
		if err := ValidateRedirectURI(u); err != nil {
			return oauthError(http.StatusBadRequest, "invalid_redirect_uri", fmt.Sprintf("redirect_uris[%d] %q %v", i, truncate(u, 100), err))
		}
	}
	m.ClientName = strings.TrimSpace(m.ClientName)
	if utf8.RuneCountInString(m.ClientName) > 200 {
		return bad("client_name", "must be at most 200 characters on one line")
	}
	if err := store.CheckDisplayName("client_name", m.ClientName); err != nil {
		return bad("client_name", err.(*store.FieldError).Message)
	}
	if m.TokenEndpointAuthMethod == "" {
		m.TokenEndpointAuthMethod = defaultAuth
	}
	if !slices.Contains(authMethods, m.TokenEndpointAuthMethod) {
		return bad("token_endpoint_auth_method", fmt.Sprintf("%q is not supported; use none, client_secret_basic or client_secret_post", m.TokenEndpointAuthMethod))
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return bad("grant_types", fmt.Sprintf("%q is not supported; use authorization_code and refresh_token", g))
		}
	}
	if !slices.Contains(m.GrantTypes, "authorization_code") {
		return bad("grant_types", "must include authorization_code")
	}
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{"code"}
	}
	for _, r := range m.ResponseTypes {
		if r != "code" {
			return bad("response_types", fmt.Sprintf("%q is not supported; use code", r))
		}
	}
	// Unknown scopes (offline_access, openid…) are tolerated and ignored.
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// registrationResponse is the RFC 7591 §3.2.1 answer.
type registrationResponse struct {
	clientMetadata
	ClientIDIssuedAt      int64  `json:"client_id_issued_at"`
	ClientSecret          string `json:"client_secret,omitempty"`
	ClientSecretExpiresAt *int64 `json:"client_secret_expires_at,omitempty"`
}

// Register is RFC 7591 registration; a confidential client's secret is stored
// only as a hash.
func (s *Server) Register(c echo.Context) error {
	ctx := c.Request().Context()
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxRegistrationBytes+1))
	if err != nil {
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_client_metadata", "the request body could not be read"))
	}
	if len(body) > maxRegistrationBytes {
		return writeError(c, oauthError(http.StatusRequestEntityTooLarge, "invalid_client_metadata", fmt.Sprintf("the registration request is larger than %d bytes", maxRegistrationBytes)))
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return writeError(c, oauthError(http.StatusBadRequest, "invalid_client_metadata", te.Field+": has the wrong JSON type"))
		}
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_client_metadata", "the body must be a JSON object of client metadata"))
	}
	if field := nulField(body); field != "" {
		return writeError(c, oauthError(http.StatusBadRequest, "invalid_client_metadata", field+": contains a NUL character"))
	}
	m.ClientID = ""
	// RFC 7591 defaults to client_secret_basic when no method is named.
	if e := m.validate(store.AuthMethodBasic); e != nil {
		return writeError(c, e)
	}
	addr := c.RealIP()
	now := s.now()
	n, err := s.store.RecentClientRegistrations(ctx, addr, now.Add(-time.Hour))
	if err != nil {
		return s.serverError(c, err)
	}
	if n >= registrationsPerHour {
		c.Response().Header().Set("Retry-After", "3600")
		return writeError(c, oauthError(http.StatusTooManyRequests, "invalid_client_metadata", "too many client registrations from this address; try again later"))
	}
	// Unapproved registrations go after a day, so they cannot pile up.
	if n, err := s.store.PruneUngrantedClients(ctx, now.Add(-ungrantedClientTTL)); err != nil {
		s.log.Warn("prune ungranted oauth clients", "err", err)
	} else if n > 0 {
		s.log.Info("pruned oauth clients never granted", "count", n)
	}
	clientID, _ := store.NewToken("osf_client_")
	stored, _ := json.Marshal(m)
	cl := &store.OAuthClient{
		ClientID:                clientID,
		ClientName:              m.ClientName,
		RedirectURIs:            m.RedirectURIs,
		TokenEndpointAuthMethod: m.TokenEndpointAuthMethod,
		Metadata:                stored,
	}
	resp := registrationResponse{clientMetadata: m}
	resp.ClientID = clientID
	if m.TokenEndpointAuthMethod != store.AuthMethodNone {
		secret, hash := store.NewToken("osf_cs_")
		cl.SecretHash = hash
		resp.ClientSecret = secret
		zero := int64(0)
		resp.ClientSecretExpiresAt = &zero
	}
	if err := s.store.CreateOAuthClient(ctx, cl, addr); err != nil {
		return s.serverError(c, err)
	}
	resp.ClientIDIssuedAt = cl.CreatedAt.Unix()
	s.log.Info("oauth client registered", "client_id", clientID, "client_name", m.ClientName, "auth_method", m.TokenEndpointAuthMethod)
	return writeJSON(c, http.StatusCreated, resp)
}
