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
	access  access
}

// routes is every route of the application, in one table.
func (s *Server) routes() []route {
	return []route{
		// Operations.
		{http.MethodGet, "/healthz", "healthz", s.healthz, accessPublic},
		{http.MethodGet, "/readyz", "readyz", s.readyz, accessPublic},
		{http.MethodGet, "/static/*", "static", echo.WrapHandler(static.Handler()), accessPublic},

		// The installable app: manifest, service worker, offline page.
		{http.MethodGet, "/manifest.webmanifest", "manifest", s.manifest, accessPublic},
		{http.MethodGet, "/sw.js", "service-worker", s.serviceWorkerScript, accessPublic},
		{http.MethodGet, "/offline", "offline", s.offlinePage, accessPublic},

		// MCP endpoint and its protected-resource metadata (RFC 9728).
		{http.MethodPost, "/mcp", "mcp", echo.WrapHandler(s.mcp), accessPublic},
		{http.MethodGet, "/mcp", "mcp-get", echo.WrapHandler(s.mcp), accessPublic},
		{http.MethodDelete, "/mcp", "mcp-delete", echo.WrapHandler(s.mcp), accessPublic},
		{http.MethodOptions, "/mcp", "mcp-preflight", echo.WrapHandler(s.mcp), accessPublic},
		// The agents' relay (the bearer token of /mcp).
		{http.MethodGet, "/agent/events", "agent-events", s.agentEvents, accessPublic},
		{http.MethodPost, "/agent/delivered", "agent-delivered", s.agentDelivered, accessPublic},
		{http.MethodGet, "/.well-known/oauth-protected-resource", "resource-metadata", echo.WrapHandler(s.mcpMeta), accessPublic},
		{http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "resource-metadata-mcp", echo.WrapHandler(s.mcpMeta), accessPublic},
		{http.MethodOptions, "/.well-known/oauth-protected-resource", "resource-metadata-preflight", echo.WrapHandler(s.mcpMeta), accessPublic},
		{http.MethodOptions, "/.well-known/oauth-protected-resource/mcp", "resource-metadata-mcp-preflight", echo.WrapHandler(s.mcpMeta), accessPublic},

		// The agent side of approvals: bearer token, JSON.
		{http.MethodPost, "/agent/approvals", "agent-approval-create", s.agentApprovalCreate, accessPublic},
		{http.MethodGet, "/agent/approval-settings", "agent-approval-settings", s.agentApprovalSettings, accessPublic},
		{http.MethodGet, "/agent/approvals/:id", "agent-approval-wait", s.agentApprovalWait, accessPublic},
		{http.MethodPost, "/agent/approvals/:id/end", "agent-approval-end", s.agentApprovalEnd, accessPublic},

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
		{http.MethodPost, "/account/mail", "account-mail", s.accountEmail, accessOwner},
		{http.MethodPost, "/account/push", "account-push", s.accountPush, accessOwner},
		{http.MethodPost, "/account/devices", "device-subscribe", s.deviceSubscribe, accessOwner},
		{http.MethodPost, "/account/devices/:id/rename", "device-rename", s.deviceRename, accessOwner},
		{http.MethodPost, "/account/devices/:id/remove", "device-remove", s.deviceRemove, accessOwner},
		// The service worker's CSRF token, to answer from a notification.
		{http.MethodGet, "/push/csrf", "push-csrf", s.pushCSRF, accessOwner},

		// People, their invitations (opened signed out), the audit log.
		{http.MethodGet, "/people", "people", s.peoplePage, accessAdmin},
		{http.MethodPost, "/people/invitations", "person-invite", s.personInvite, accessAdmin},
		{http.MethodPost, "/people/invitations/:id/revoke", "person-invite-revoke", s.personInviteRevoke, accessAdmin},
		{http.MethodPost, "/people/:id/role", "person-role", s.personRole, accessAdmin},
		{http.MethodPost, "/people/:id/remove", "person-remove", s.personRemove, accessAdmin},
		{http.MethodGet, "/join/:token", "join", s.joinForm, accessWeb},
		{http.MethodPost, "/join/:token", "join-submit", s.joinSubmit, accessWeb},
		{http.MethodGet, "/audit", "audit", s.auditPage, accessAdmin},
		{http.MethodGet, "/audit.jsonl", "audit-export", s.auditExport, accessAdmin},
		{http.MethodPost, "/account/profile", "account-profile", s.accountProfile, accessOwner},

		// Email links answer as the owner they were mailed to, on the POST only.
		{http.MethodGet, "/answer/:token", "answer-link", s.answerLinkPage, accessWeb},
		{http.MethodPost, "/answer/:token", "answer-link-answer", s.answerLinkAnswer, accessWeb},
		{http.MethodGet, "/approve/:token", "approval-link", s.approvalLinkPage, accessWeb},
		{http.MethodPost, "/approve/:token", "approval-link-decide", s.approvalLinkDecide, accessWeb},

		// Projects and sessions.
		{http.MethodGet, "/", "home", s.projectList, accessOwner},
		{http.MethodPost, "/projects", "project-create", s.projectCreate, accessAdmin},
		{http.MethodGet, "/inbox", "inbox", s.pages.Limit(s.inbox), accessOwner},
		{http.MethodPost, "/inbox/read", "inbox-read", s.inboxRead, accessOwner},
		{http.MethodGet, "/inbox/questions", "inbox-questions", s.inboxQuestions, accessOwner},
		{http.MethodGet, "/approvals", "approvals", s.approvalList, accessOwner},
		{http.MethodPost, "/approvals/:id/decide", "approval-decide", s.approvalDecide, accessMember},
		{http.MethodGet, "/search", "search", s.pages.Limit(s.search), accessOwner},
		{http.MethodGet, "/projects/:id", "project", s.projectDetail, accessOwner},
		{http.MethodGet, "/projects/:id/radar", "project-radar", s.projectRadar, accessOwner},
		{http.MethodPost, "/projects/:id/rename", "project-rename", s.projectRename, accessAdmin},
		{http.MethodPost, "/projects/:id/questions", "project-questions", s.projectQuestions, accessAdmin},
		{http.MethodPost, "/projects/:id/approvals", "project-approvals", s.projectApprovals, accessAdmin},
		{http.MethodPost, "/projects/:id/limits", "project-limits", s.projectLimits, accessAdmin},
		{http.MethodPost, "/projects/:id/seats", "project-seat", s.projectSeat, accessAdmin},
		{http.MethodPost, "/projects/:id/seats/:conn/remove", "project-unseat", s.projectUnseat, accessAdmin},
		{http.MethodPost, "/projects/:id/sessions", "session-create", s.sessionCreate, accessMember},
		{http.MethodGet, "/projects/:id/webhooks", "webhooks", s.webhookList, accessAdmin},
		{http.MethodPost, "/projects/:id/webhooks", "webhook-create", s.webhookCreate, accessAdmin},
		{http.MethodGet, "/projects/:id/webhooks/:hook", "webhook", s.webhookDetail, accessAdmin},
		{http.MethodGet, "/projects/:id/webhooks/:hook/log", "webhook-log", s.webhookLog, accessAdmin},
		{http.MethodPost, "/projects/:id/webhooks/:hook/test", "webhook-test", s.webhookSendTest, accessAdmin},
		{http.MethodPost, "/projects/:id/webhooks/:hook/deliveries/:delivery/retry", "webhook-retry", s.webhookRetry, accessAdmin},
		{http.MethodPost, "/projects/:id/webhooks/:hook/enable", "webhook-enable", s.webhookEnable, accessAdmin},
		{http.MethodPost, "/projects/:id/webhooks/:hook/disable", "webhook-disable", s.webhookDisable, accessAdmin},
		{http.MethodPost, "/projects/:id/webhooks/:hook/delete", "webhook-delete", s.webhookDelete, accessAdmin},
		{http.MethodGet, "/sessions/:id", "session", s.sessionPage, accessOwner},
		{http.MethodGet, "/unread/stream", "unread-stream", s.unreadStream, accessOwner},
		{http.MethodGet, "/sessions/:id/stream", "session-stream", s.sessionStream, accessOwner},
		{http.MethodGet, "/sessions/:id/mail/poll", "session-mail-poll", s.mailPoll, accessOwner},
		{http.MethodPost, "/sessions/:id/mail/read", "session-mail-read", s.mailRead, accessOwner},
		{http.MethodGet, "/sessions/:id/mail/older", "session-mail-older", s.mailOlder, accessOwner},
		{http.MethodGet, "/sessions/:id/presence", "session-presence", s.presencePoll, accessOwner},
		{http.MethodGet, "/sessions/:id/compose", "session-compose", s.noteCompose, accessMember},
		{http.MethodPost, "/sessions/:id/mail", "session-note-post", s.notePost, accessMember},
		{http.MethodGet, "/sessions/:id/notes/:note", "session-thread", s.noteThread, accessOwner},
		{http.MethodPost, "/sessions/:id/questions/:note/answer", "session-question-answer", s.questionAnswer, accessMember},
		{http.MethodGet, "/sessions/:id/export.md", "session-export-md", s.sessionExportMarkdown, accessOwner},
		{http.MethodGet, "/sessions/:id/export.json", "session-export-json", s.sessionExportJSON, accessOwner},
		{http.MethodGet, "/sessions/:id/participants", "session-participants", s.participantList, accessOwner},
		{http.MethodPost, "/sessions/:id/invitations", "session-invite", s.inviteCreate, accessMember},
		{http.MethodPost, "/sessions/:id/invitations/:conn", "session-invite-update", s.inviteUpdate, accessMember},
		{http.MethodPost, "/sessions/:id/invitations/:conn/remove", "session-invite-remove", s.inviteRemove, accessMember},

		// Connections.
		{http.MethodGet, "/connections", "connections", s.connectionList, accessOwner},
		{http.MethodPost, "/connections/tokens", "connections-token", s.staticTokenCreate, accessAdmin},
		{http.MethodGet, "/connections/:id/revoke", "connection-revoke-confirm", s.connectionRevokeConfirm, accessAdmin},
		{http.MethodPost, "/connections/:id/revoke", "connection-revoke", s.connectionRevoke, accessAdmin},
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
