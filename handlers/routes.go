package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/oauth"
	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/static"
)

// route is one line of the routing table.
type route struct {
	method  string
	path    string
	name    string
	handler echo.HandlerFunc
	// access is accessPublic, accessWeb or accessOwner (see access.go).
	access access
}

// routes is every route of the application, in one table.
func (s *Server) routes() []route {
	return []route{
		// Operations.
		{http.MethodGet, "/healthz", "healthz", s.healthz, accessPublic},
		{http.MethodGet, "/readyz", "readyz", s.readyz, accessPublic},
		{http.MethodGet, "/static/*", "static", echo.WrapHandler(static.Handler()), accessPublic},

		// MCP endpoint and its protected-resource metadata (RFC 9728).
		{http.MethodPost, "/mcp", "mcp", echo.WrapHandler(s.mcp), accessPublic},
		{http.MethodGet, "/mcp", "mcp-get", echo.WrapHandler(s.mcp), accessPublic},
		{http.MethodDelete, "/mcp", "mcp-delete", echo.WrapHandler(s.mcp), accessPublic},
		{http.MethodOptions, "/mcp", "mcp-preflight", echo.WrapHandler(s.mcp), accessPublic},
		{http.MethodGet, "/.well-known/oauth-protected-resource", "resource-metadata", echo.WrapHandler(s.mcpMeta), accessPublic},
		{http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "resource-metadata-mcp", echo.WrapHandler(s.mcpMeta), accessPublic},
		{http.MethodOptions, "/.well-known/oauth-protected-resource", "resource-metadata-preflight", echo.WrapHandler(s.mcpMeta), accessPublic},
		{http.MethodOptions, "/.well-known/oauth-protected-resource/mcp", "resource-metadata-mcp-preflight", echo.WrapHandler(s.mcpMeta), accessPublic},

		// OAuth authorization server.
		{http.MethodGet, "/.well-known/oauth-authorization-server", "oauth-metadata", oauth.CORS(s.oauth.ServeMetadata), accessPublic},
		{http.MethodOptions, "/.well-known/oauth-authorization-server", "oauth-metadata-preflight", oauth.CORS(oauth.Preflight), accessPublic},
		{http.MethodGet, "/.well-known/openid-configuration", "openid-configuration", oauth.CORS(s.oauth.ServeMetadata), accessPublic},
		{http.MethodOptions, "/.well-known/openid-configuration", "openid-configuration-preflight", oauth.CORS(oauth.Preflight), accessPublic},
		{http.MethodPost, "/register", "oauth-register", oauth.CORS(s.oauth.Register), accessPublic},
		{http.MethodOptions, "/register", "oauth-register-preflight", oauth.CORS(oauth.Preflight), accessPublic},
		{http.MethodPost, "/token", "oauth-token", oauth.CORS(s.oauth.Token), accessPublic},
		{http.MethodOptions, "/token", "oauth-token-preflight", oauth.CORS(oauth.Preflight), accessPublic},
		{http.MethodPost, "/revoke", "oauth-revoke", oauth.CORS(s.oauth.Revoke), accessPublic},
		{http.MethodOptions, "/revoke", "oauth-revoke-preflight", oauth.CORS(oauth.Preflight), accessPublic},
		{http.MethodGet, "/authorize", "authorize", s.authorizeForm, accessWeb},
		{http.MethodPost, "/authorize", "authorize-submit", s.authorizeSubmit, accessWeb},

		// Owner accounts.
		{http.MethodGet, "/setup", "setup", s.setupForm, accessWeb},
		{http.MethodPost, "/setup", "setup-submit", s.setupSubmit, accessWeb},
		{http.MethodGet, "/login", "login", s.loginForm, accessWeb},
		{http.MethodPost, "/login", "login-submit", s.loginSubmit, accessWeb},
		{http.MethodPost, "/logout", "logout", s.logout, accessWeb},
		{http.MethodGet, "/account", "account", s.accountPage, accessOwner},
		{http.MethodPost, "/account/password", "account-password", s.accountPassword, accessOwner},
		{http.MethodPost, "/account/sign-ins/end-others", "sign-ins-end-others", s.signInEndOthers, accessOwner},
		{http.MethodPost, "/account/sign-ins/:id/end", "sign-in-end", s.signInEnd, accessOwner},
		{http.MethodPost, "/account/mail", "account-mail", s.accountMail, accessOwner},
		{http.MethodPost, "/account/profile", "account-profile", s.accountProfile, accessOwner},

		// The answer links of questions' emails: they answer as the owner
		// they were mailed to, signed in or not, and only on the POST.
		{http.MethodGet, "/answer/:token", "answer-link", s.answerLinkPage, accessWeb},
		{http.MethodPost, "/answer/:token", "answer-link-answer", s.answerLinkAnswer, accessWeb},

		// Projects and sessions.
		{http.MethodGet, "/", "home", s.projectList, accessOwner},
		{http.MethodPost, "/projects", "project-create", s.projectCreate, accessOwner},
		{http.MethodGet, "/inbox", "inbox", s.inbox, accessOwner},
		{http.MethodPost, "/inbox/read", "inbox-read", s.inboxRead, accessOwner},
		{http.MethodGet, "/inbox/questions", "inbox-questions", s.inboxQuestions, accessOwner},
		{http.MethodGet, "/search", "search", s.search, accessOwner},
		{http.MethodGet, "/projects/:id", "project", s.projectDetail, accessOwner},
		{http.MethodGet, "/projects/:id/radar", "project-radar", s.projectRadar, accessOwner},
		{http.MethodPost, "/projects/:id/rename", "project-rename", s.projectRename, accessOwner},
		{http.MethodPost, "/projects/:id/questions", "project-questions", s.projectQuestions, accessOwner},
		{http.MethodPost, "/projects/:id/seats", "project-seat", s.projectSeat, accessOwner},
		{http.MethodPost, "/projects/:id/seats/:conn/remove", "project-unseat", s.projectUnseat, accessOwner},
		{http.MethodPost, "/projects/:id/sessions", "session-create", s.sessionCreate, accessOwner},
		{http.MethodGet, "/projects/:id/webhooks", "webhooks", s.webhookList, accessOwner},
		{http.MethodPost, "/projects/:id/webhooks", "webhook-create", s.webhookCreate, accessOwner},
		{http.MethodGet, "/projects/:id/webhooks/:hook", "webhook", s.webhookDetail, accessOwner},
		{http.MethodGet, "/projects/:id/webhooks/:hook/log", "webhook-log", s.webhookLog, accessOwner},
		{http.MethodPost, "/projects/:id/webhooks/:hook/test", "webhook-test", s.webhookSendTest, accessOwner},
		{http.MethodPost, "/projects/:id/webhooks/:hook/deliveries/:delivery/retry", "webhook-retry", s.webhookRetry, accessOwner},
		{http.MethodPost, "/projects/:id/webhooks/:hook/enable", "webhook-enable", s.webhookEnable, accessOwner},
		{http.MethodPost, "/projects/:id/webhooks/:hook/disable", "webhook-disable", s.webhookDisable, accessOwner},
		{http.MethodPost, "/projects/:id/webhooks/:hook/delete", "webhook-delete", s.webhookDelete, accessOwner},
		{http.MethodGet, "/sessions/:id", "session", s.sessionPage, accessOwner},
		{http.MethodGet, "/unread/stream", "unread-stream", s.unreadStream, accessOwner},
		{http.MethodGet, "/sessions/:id/stream", "session-stream", s.sessionStream, accessOwner},
		{http.MethodGet, "/sessions/:id/mail/poll", "session-mail-poll", s.mailPoll, accessOwner},
		{http.MethodPost, "/sessions/:id/mail/read", "session-mail-read", s.mailRead, accessOwner},
		{http.MethodGet, "/sessions/:id/mail/older", "session-mail-older", s.mailOlder, accessOwner},
		{http.MethodGet, "/sessions/:id/presence", "session-presence", s.presencePoll, accessOwner},
		{http.MethodGet, "/sessions/:id/compose", "session-compose", s.noteCompose, accessOwner},
		{http.MethodPost, "/sessions/:id/mail", "session-note-post", s.notePost, accessOwner},
		{http.MethodGet, "/sessions/:id/notes/:note", "session-thread", s.noteThread, accessOwner},
		{http.MethodPost, "/sessions/:id/questions/:note/answer", "session-question-answer", s.questionAnswer, accessOwner},
		{http.MethodGet, "/sessions/:id/export.md", "session-export-md", s.sessionExportMarkdown, accessOwner},
		{http.MethodGet, "/sessions/:id/export.json", "session-export-json", s.sessionExportJSON, accessOwner},
		{http.MethodGet, "/sessions/:id/participants", "session-participants", s.participantList, accessOwner},
		{http.MethodPost, "/sessions/:id/invitations", "session-invite", s.inviteCreate, accessOwner},
		{http.MethodPost, "/sessions/:id/invitations/:conn", "session-invite-update", s.inviteUpdate, accessOwner},
		{http.MethodPost, "/sessions/:id/invitations/:conn/remove", "session-invite-remove", s.inviteRemove, accessOwner},

		// Connections.
		{http.MethodGet, "/connections", "connections", s.connectionList, accessOwner},
		{http.MethodPost, "/connections/tokens", "connections-token", s.staticTokenCreate, accessOwner},
		{http.MethodGet, "/connections/:id/revoke", "connection-revoke-confirm", s.connectionRevokeConfirm, accessOwner},
		{http.MethodPost, "/connections/:id/revoke", "connection-revoke", s.connectionRevoke, accessOwner},
	}
}

// routeTable is the routing table as the HTTP metrics name its routes.
func routeTable(rs []route) []metrics.Route {
	out := make([]metrics.Route, len(rs))
	for i, r := range rs {
		out[i] = metrics.Route{Name: r.name, Method: r.method, Path: r.path}
	}
	return out
}
