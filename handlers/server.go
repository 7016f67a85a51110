// Package handlers is the owner web app and the mounts of MCP and OAuth; every
// route is in routes.go.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/osfoundry/osfoundry/handlers/inbound"
	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/handlers/oauth"
	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/live"
	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

// Config is what the handlers need to know about the deployment.
type Config struct {
	// BaseURL is the public origin, like http://localhost:8080 (no trailing slash).
	BaseURL string
	// SessionKeys are the cookie signing (64 bytes) and encryption (32 bytes) keys.
	SessionHashKey  []byte
	SessionBlockKey []byte
	// TrustProxyHeaders takes the address from X-Forwarded-For behind a loopback or
	// private proxy; otherwise a header could dodge the throttles.
	TrustProxyHeaders bool
	// AllowPrivateTargets lets outgoing requests reach non-public addresses.
	AllowPrivateTargets bool
	// StreamLimits bound the live streams (zero: live.DefaultLimits).
	StreamLimits live.Limits
	// WaitLimits bound the waiting ask_owner calls (zero: mcp.DefaultWaitLimits).
	WaitLimits mcp.WaitLimits
	// PageLimits bound search and inbox loads (zero: DefaultPageLimits).
	PageLimits PageLimits
	// NoClientMetadataDocuments makes clients register instead.
	NoClientMetadataDocuments bool
	// Email says --smtp-url is set.
	Email bool
	// MCPSDKOnly has the MCP SDK answer every /mcp request (mcp.Options).
	MCPSDKOnly bool
	// VAPIDPublicKey is the Web Push server key browsers subscribe with.
	VAPIDPublicKey string
}

// PageLimits bound one sign-in's loads of search and the inbox (token bucket).
type PageLimits struct {
	PerMinute int
	Burst     int
}

// DefaultPageLimits: an owner reading and searching by hand never meets them.
var DefaultPageLimits = PageLimits{PerMinute: 60, Burst: 20}

// Secure reports whether cookies must carry the Secure flag.
func (c Config) Secure() bool { return strings.HasPrefix(c.BaseURL, "https://") }

// Server holds the dependencies of every handler.
type Server struct {
	store    *store.Store
	cfg      Config
	log      *slog.Logger
	sessions *web.Sessions
	// publicHost is BaseURL's host, with loopback the only Host answered.
	publicHost string
	// targets warns forms of a URL the outgoing guard would refuse.
	targets *outbound.Guard
	mcp     *mcp.Handler
	mcpMeta http.Handler
	oauth   *oauth.Server
	// mail answers "anything new in this session?" without a query.
	mail *store.MailCache
	// live holds this replica's open event streams; the listener feeds it.
	live *live.Broker
	// relay holds this replica's agent event streams (GET /agent/events).
	relay *live.AgentRelay
	// metrics receives the tool calls and, through requests, the HTTP requests.
	metrics  *metrics.Metrics
	requests *metrics.Routes
	// approvals are the hooks waiting here for an owner's decision.
	approvals *store.QuestionWaits
	// pages are the sign-ins' buckets of search and inbox loads.
	pages *web.PageLimiter
	// sendInvite mails invitations (nil: email is off).
	sendInvite func(ctx context.Context, inv *store.PersonInvite, link string) error
}

// Deps are the collaborators New wires together.
type Deps struct {
	Store  *store.Store
	Config Config
	Logger *slog.Logger
	// Listener feeds the live streams; the caller runs it.
	Listener *store.Listener
	// Mail answers polls without a query while the listener is up.
	Mail *store.MailCache
	// Metrics receives tool calls and HTTP requests (nil: series no one scrapes).
	Metrics *metrics.Metrics
	// SendInvite mails an invitation's link; nil when email is off.
	SendInvite func(ctx context.Context, inv *store.PersonInvite, link string) error

	// Test holds settings for tests only.
	Test TestDeps
}

// TestDeps are the handlers' settings for tests only.
type TestDeps struct {
	// Now is the OAuth server's clock, for tests to move.
	Now func() time.Time
}

// New builds the handlers and everything they share (the MCP server is built here, once).
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	d.Config.BaseURL = strings.TrimRight(d.Config.BaseURL, "/")
	if d.Listener == nil {
		d.Listener = d.Store.NewListener(d.Logger)
	}
	if d.Mail == nil {
		d.Mail = d.Store.NewMailCache(d.Listener)
	}
	if d.Metrics == nil {
		d.Metrics = metrics.New()
	}
	pl := d.Config.PageLimits
	if pl.PerMinute <= 0 || pl.Burst <= 0 {
		pl = DefaultPageLimits
	}
	s := &Server{store: d.Store, cfg: d.Config, log: d.Logger, mail: d.Mail, metrics: d.Metrics, pages: web.NewPageLimiter(pl.PerMinute, pl.Burst), sendInvite: d.SendInvite}
	s.publicHost = inbound.PublicHost(d.Config.BaseURL)
	s.targets = outbound.NewGuard(outbound.Options{AllowPrivate: d.Config.AllowPrivateTargets})
	s.sessions = web.NewSessions(d.Store, d.Config.SessionHashKey, d.Config.SessionBlockKey, d.Config.Secure(), d.Listener)
	s.live = live.New(live.Options{Source: d.Store, Render: liveRender, Log: d.Logger, Limits: d.Config.StreamLimits})
	s.live.Hear(d.Listener)
	d.Metrics.CountStreams(s.live.Open)
	s.relay = live.NewAgentRelay(live.AgentOptions{Source: d.Store, Render: s.relayFrame, Log: d.Logger})
	s.relay.Hear(d.Listener)
	d.Metrics.CountAgentStreams(s.relay.Open)
	s.oauth = oauth.New(oauth.Options{Store: d.Store, BaseURL: d.Config.BaseURL, Logger: d.Logger, AllowPrivateTargets: d.Config.AllowPrivateTargets,
		NoClientMetadataDocuments: d.Config.NoClientMetadataDocuments, Test: oauth.TestOptions{Now: d.Test.Now}})
	s.initMCP(d.Listener)
	s.approvals = d.Store.NewApprovalWaits(d.Listener)
	s.requests = d.Metrics.Routes(routeTable(s.routes()))
	return s
}

// CloseStreams ends every stream and ask_owner wait; call it before
// http.Server.Shutdown, which would otherwise wait for them.
func (s *Server) CloseStreams() {
	s.live.Close()
	s.relay.Close()
	s.mcp.EndWaits()
	s.approvals.End()
}
