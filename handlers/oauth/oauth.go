// Package oauth is the built-in OAuth 2.1 authorization server for MCP clients
// (the consent page lives in package handlers).
package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

// Lifetimes and limits of the authorization server.
const (
	// CodeTTL is how long an authorization code may be redeemed.
	CodeTTL = 60 * time.Second
	// RefreshGrace is how long an exchanged refresh token keeps returning its successor pair.
	RefreshGrace = 60 * time.Second
	// RefreshTokenTTL is the life of a refresh token; each rotation starts a new one.
	RefreshTokenTTL = 90 * 24 * time.Hour
	// maxRegistrationBytes caps a registration request or metadata document.
	maxRegistrationBytes = 64 << 10
	// registrationsPerHour limits dynamic registrations per address.
	registrationsPerHour = 30
	// metadataDocumentTTL is how long a fetched client ID metadata document is trusted.
	metadataDocumentTTL = time.Hour
	// ungrantedClientTTL is how long a client no owner has approved is kept.
	ungrantedClientTTL = 24 * time.Hour
)

// Options are the dependencies of the authorization server.
type Options struct {
	Store *store.Store
	// BaseURL is the public origin, like http://localhost:8080.
	BaseURL string
	Logger  *slog.Logger
	// AllowPrivateTargets lets documents be fetched from non-public addresses.
	AllowPrivateTargets bool
	// NoClientMetadataDocuments makes clients register, for a server that cannot
	// reach their documents' hosts.
	NoClientMetadataDocuments bool

	// Test holds settings for tests only.
	Test TestOptions
}

// TestOptions are the authorization server's settings for tests only.
type TestOptions struct {
	// Now is the clock, for tests to move.
	Now func() time.Time
}

// Server is the authorization server. Build it with New.
type Server struct {
	store        *store.Store
	base         string
	issuer       string
	log          *slog.Logger
	now          func() time.Time
	fetch        *http.Client
	allowPrivate bool
	// metadataDocuments: client ID metadata documents are accepted and advertised.
	metadataDocuments bool
	documents         documentCache
	fetches           fetchThrottle
	secretMu          sync.Mutex
	derivationSK      []byte
}

// New builds the authorization server for the deployment at o.BaseURL.
func New(o Options) *Server {
	s := &Server{
		store:        o.Store,
		base:         strings.TrimRight(o.BaseURL, "/"),
		log:          o.Logger,
		now:          o.Test.Now,
		allowPrivate: o.AllowPrivateTargets,

		metadataDocuments: !o.NoClientMetadataDocuments,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.issuer = s.base
	if u, err := url.Parse(s.base); err == nil && u.Host != "" {
		s.issuer = u.Scheme + "://" + u.Host
	}
	s.fetch = newDocumentClient(outbound.Options{AllowPrivate: s.allowPrivate})
	return s
}

// Resource is the protected resource tokens are bound to: <base>/mcp.
func (s *Server) Resource() string { return s.base + "/mcp" }

// matchResource tolerates a trailing slash (the TypeScript SDK sends new URL(resource).href).
func (s *Server) matchResource(r string) bool {
	return r == s.Resource() || r == s.Resource()+"/"
}

// lifetimes are the lives of issued tokens.
func lifetimes() store.TokenLifetimes {
	return store.TokenLifetimes{Access: store.AccessTokenTTL, Refresh: RefreshTokenTTL}
}

// derivationKey is the replicas' shared secret for successor tokens, loaded once.
func (s *Server) derivationKey(ctx context.Context) ([]byte, error) {
	s.secretMu.Lock()
	defer s.secretMu.Unlock()
	if s.derivationSK != nil {
		return s.derivationSK, nil
	}
	k, err := s.store.ServerSecret(ctx, store.RefreshDerivationSecret)
	if err != nil {
		return nil, err
	}
	s.derivationSK = k
	return k, nil
}

// successor derives rt's replacement pair, so that every replica answers a
// repeat within the grace window alike while storing only hashes.
func successor(key []byte) func(rt string) (access, refresh string) {
	return func(rt string) (string, string) {
		mac := func(label string) string {
			h := hmac.New(sha256.New, key)
			h.Write([]byte(label))
			h.Write([]byte{0})
			h.Write([]byte(rt))
			return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
		}
		return store.AccessTokenPrefix + mac("access"), store.RefreshTokenPrefix + mac("refresh")
	}
}

// CORS opens an endpoint to browser clients (any origin, no credentials).
func CORS(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Add("Vary", "Origin")
		if c.Request().Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			h.Set("Access-Control-Max-Age", "86400")
			return c.NoContent(http.StatusNoContent)
		}
		return next(c)
	}
}

// Preflight answers an OPTIONS request; use it wrapped in CORS.
func Preflight(c echo.Context) error { return c.NoContent(http.StatusNoContent) }

// Error is an OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2).
type Error struct {
	Status      int    `json:"-"`
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func oauthError(status int, code, desc string) *Error {
	return &Error{Status: status, Code: code, Description: desc}
}

// writeJSON sends an OAuth JSON response, never cached.
func writeJSON(c echo.Context, status int, v any) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	return c.JSON(status, v)
}

// writeError sends e as JSON; an invalid_client after HTTP Basic gets the challenge.
func writeError(c echo.Context, e *Error) error {
	if e.Status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Basic realm="osfoundry"`)
	}
	return writeJSON(c, e.Status, e)
}

// serverError logs an infrastructure failure and answers with OAuth JSON.
func (s *Server) serverError(c echo.Context, err error) error {
	s.log.Error("oauth endpoint failed", "path", c.Request().URL.Path, "err", err)
	c.Response().Header().Set("Retry-After", "5")
	return writeJSON(c, http.StatusServiceUnavailable, oauthError(http.StatusServiceUnavailable, "temporarily_unavailable", "the server could not complete the request; try again"))
}
