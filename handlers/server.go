// Package handlers is the HTTP face of osFoundry: the owner web app (echo +
// templ + htmx) and the mounts of the MCP endpoint and the OAuth server. All
// routes are listed in routes.go.
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
	// TrustProxyHeaders takes the client address from X-Forwarded-For when the
	// request comes from a loopback or private-network proxy; otherwise the
	// TCP peer address is used, so throttles cannot be dodged with a header.
	TrustProxyHeaders bool
	// AllowPrivateTargets lets outgoing requests (client ID metadata
	// documents, webhooks) reach addresses that are not public: loopback,
	// private networks, link-local and the like. Off, they are refused.
	AllowPrivateTargets bool
	// StreamLimits bound the live streams held at once per sign-in, per
	// owner and per client address (zero fields: live.DefaultLimits).
	StreamLimits live.Limits
	// WaitLimits bound the ask_owner calls waiting for an answer (zero
	// fields: mcp.DefaultWaitLimits).
	WaitLimits mcp.WaitLimits
	// PageLimits bound how often one sign-in loads search and the inbox
	// (zero fields: DefaultPageLimits).
	PageLimits PageLimits
	// NoClientMetadataDocuments stops accepting and advertising client ID
	// metadata documents, so clients register instead.
	NoClientMetadataDocuments bool
	// Email says mail is sent (--smtp-url is set); the account page says
	// when it is not.
	Email bool
	// MCPSDKOnly has the MCP SDK answer every /mcp request (mcp.Options).
	MCPSDKOnly bool
	// VAPIDPublicKey is the Web Push application server key (base64url)
	// browsers subscribe with.
	VAPIDPublicKey string
}

// PageLimits bound how often one sign-in may load search and the inbox: PerMinute
// loads a minute, bursts of at most Burst; past them the page answers 429.
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
	// publicHost is the host (and port) of BaseURL: with loopback, the
	// only Host the listener answers.
	publicHost string
	// targets is the guard of outgoing requests, for the forms that warn
	// of a URL it refuses before anything is sent.
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
	// Listener is the replica's LISTEN connection, which feeds the live
	// streams; the caller runs it. Without one (or while it is down) streams
	// are refused.
	Listener *store.Listener
	// Mail keeps the newest note id per session, over Listener; without
	// one (or while the listener is down) polls ask the database.
	Mail *store.MailCache
	// Metrics receives what the handlers observe (tool calls, HTTP
	// requests); nil gives a set of series of their own that no one scrapes.
	Metrics *metrics.Metrics
	// SendInvite mails an invitation's link at once; nil when email is
	// off (the People page then only shows the link to copy).
	SendInvite func(ctx context.Context, inv *store.PersonInvite, link string) error

	// Test holds settings for tests only.
	Test TestDeps
}

// TestDeps are the handlers' settings for tests only.
type TestDeps struct {
	// Now is the OAuth server's clock (time.Now when nil): tests move it
	// instead of sleeping. For tests only.
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

// CloseStreams ends every live event stream and refuses new ones, and ends
// the waits of ask_owner calls (each answers with its question as it
// stands). Call it when shutdown starts, before http.Server.Shutdown:
// streams never finish on their own, waits only after minutes, and the
// drain must not wait for them. Browsers reconnect to another replica (or
// this one, restarted) and replay what they missed; agents read the answer
// as mail.
func (s *Server) CloseStreams() {
	s.live.Close()
	s.relay.Close()
	s.mcp.EndWaits()
	s.approvals.End()
}
