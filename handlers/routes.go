package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/oauth"
	"github.com/osfoundry/osfoundry/static"
)

// route is one line of the routing table.
type route struct {
	method  string
	path    string
	name    string
	handler echo.HandlerFunc
	// access: "public" (no cookie session), "web" (cookie session + CSRF, signed
	// out allowed) or "owner" (signed-in owner required).
	access string
}

// routes is every route of the application, in one table.
func (s *Server) routes() []route {
	return []route{
		// Operations.
		{http.MethodGet, "/healthz", "healthz", s.healthz, "public"},
		{http.MethodGet, "/readyz", "readyz", s.readyz, "public"},
		{http.MethodGet, "/static/*", "static", echo.WrapHandler(static.Handler()), "public"},

		// MCP endpoint and its protected-resource metadata (RFC 9728).
		{http.MethodPost, "/mcp", "mcp", echo.WrapHandler(s.mcp), "public"},
		{http.MethodGet, "/mcp", "mcp-get", echo.WrapHandler(s.mcp), "public"},
		{http.MethodDelete, "/mcp", "mcp-delete", echo.WrapHandler(s.mcp), "public"},
		{http.MethodOptions, "/mcp", "mcp-preflight", echo.WrapHandler(s.mcp), "public"},
		{http.MethodGet, "/.well-known/oauth-protected-resource", "resource-metadata", echo.WrapHandler(s.mcpMeta), "public"},
		{http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "resource-metadata-mcp", echo.WrapHandler(s.mcpMeta), "public"},
		{http.MethodOptions, "/.well-known/oauth-protected-resource", "resource-metadata-preflight", echo.WrapHandler(s.mcpMeta), "public"},
		{http.MethodOptions, "/.well-known/oauth-protected-resource/mcp", "resource-metadata-mcp-preflight", echo.WrapHandler(s.mcpMeta), "public"},

		// OAuth authorization server.
		{http.MethodGet, "/.well-known/oauth-authorization-server", "oauth-metadata", oauth.CORS(s.oauth.ServeMetadata), "public"},
		{http.MethodOptions, "/.well-known/oauth-authorization-server", "oauth-metadata-preflight", oauth.CORS(oauth.Preflight), "public"},
		{http.MethodGet, "/.well-known/openid-configuration", "openid-configuration", oauth.CORS(s.oauth.ServeMetadata), "public"},
		{http.MethodOptions, "/.well-known/openid-configuration", "openid-configuration-preflight", oauth.CORS(oauth.Preflight), "public"},
		{http.MethodPost, "/register", "oauth-register", oauth.CORS(s.oauth.Register), "public"},
		{http.MethodOptions, "/register", "oauth-register-preflight", oauth.CORS(oauth.Preflight), "public"},
		{http.MethodPost, "/token", "oauth-token", oauth.CORS(s.oauth.Token), "public"},
		{http.MethodOptions, "/token", "oauth-token-preflight", oauth.CORS(oauth.Preflight), "public"},
		{http.MethodPost, "/revoke", "oauth-revoke", oauth.CORS(s.oauth.Revoke), "public"},
		{http.MethodOptions, "/revoke", "oauth-revoke-preflight", oauth.CORS(oauth.Preflight), "public"},
		{http.MethodGet, "/authorize", "authorize", s.authorizeForm, "web"},
		{http.MethodPost, "/authorize", "authorize-submit", s.authorizeSubmit, "web"},

		// Owner accounts.
		{http.MethodGet, "/setup", "setup", s.setupForm, "web"},
		{http.MethodPost, "/setup", "setup-submit", s.setupSubmit, "web"},
		{http.MethodGet, "/login", "login", s.loginForm, "web"},
		{http.MethodPost, "/login", "login-submit", s.loginSubmit, "web"},
		{http.MethodPost, "/logout", "logout", s.logout, "web"},

		// Projects and sessions.
		{http.MethodGet, "/", "home", s.projectsPage, "owner"},
		{http.MethodPost, "/projects", "project-create", s.projectCreate, "owner"},
		{http.MethodGet, "/projects/:id", "project", s.projectPage, "owner"},
		{http.MethodPost, "/projects/:id/rename", "project-rename", s.projectRename, "owner"},
		{http.MethodPost, "/projects/:id/seats", "project-seat", s.projectSeat, "owner"},
		{http.MethodPost, "/projects/:id/seats/:conn/remove", "project-unseat", s.projectUnseat, "owner"},
		{http.MethodPost, "/projects/:id/sessions", "session-create", s.sessionCreate, "owner"},
		{http.MethodGet, "/sessions/:id", "session", s.sessionPage, "owner"},
		{http.MethodGet, "/sessions/:id/mail/poll", "session-mail-poll", s.mailPoll, "owner"},
		{http.MethodGet, "/sessions/:id/mail/older", "session-mail-older", s.mailOlder, "owner"},
		{http.MethodGet, "/sessions/:id/presence", "session-presence", s.presencePoll, "owner"},
		{http.MethodGet, "/sessions/:id/compose", "session-compose", s.compose, "owner"},
		{http.MethodPost, "/sessions/:id/mail", "session-note-post", s.notePost, "owner"},
		{http.MethodGet, "/sessions/:id/participants", "session-participants", s.participantsPage, "owner"},
		{http.MethodPost, "/sessions/:id/invitations", "session-invite", s.invite, "owner"},
		{http.MethodPost, "/sessions/:id/invitations/:conn", "session-invite-update", s.inviteUpdate, "owner"},
		{http.MethodPost, "/sessions/:id/invitations/:conn/remove", "session-invite-remove", s.inviteRemove, "owner"},

		// Connections.
		{http.MethodGet, "/connections", "connections", s.connections, "owner"},
		{http.MethodPost, "/connections/tokens", "connections-token", s.createStaticToken, "owner"},
		{http.MethodGet, "/connections/:id/revoke", "connection-revoke-confirm", s.confirmRevokeConnection, "owner"},
		{http.MethodPost, "/connections/:id/revoke", "connection-revoke", s.revokeConnection, "owner"},
	}
}
