// Package mcp serves the MCP endpoint agents sign in to: ten tools over
// Streamable HTTP (stateless, so any replica answers any request), the bearer
// token check in front of them, and the protected-resource metadata that
// tells clients where to get a token.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
)

// Options configures the MCP handler.
type Options struct {
	Store *store.Store
	// BaseURL is the public origin of the app, e.g. http://localhost:8080, no
	// trailing slash. The MCP resource is BaseURL + "/mcp".
	BaseURL string
	Logger  *slog.Logger
	// Metrics receives every tool call (nil: series no one scrapes).
	Metrics *metrics.Metrics
	// Listener is the replica's LISTEN connection, whose notifications end
	// ask_owner's waits when the answer comes on any replica (nil: a waiting
	// call only looks by itself, every few seconds).
	Listener *store.Listener
	// SDKOnly has the SDK answer every request, also those the front
	// answers itself (make bench measures both).
	SDKOnly bool
	// WaitLimits bound the ask_owner calls waiting for an answer (zero
	// fields: DefaultWaitLimits).
	WaitLimits WaitLimits
}

// Handler serves /mcp and the protected-resource metadata.
type Handler struct {
	store       *store.Store
	log         *slog.Logger
	issuer      string // origin of BaseURL, no trailing slash
	resource    string // <base>/mcp: the audience every token must be bound to
	metadataURL string // <origin>/.well-known/oauth-protected-resource/mcp
	server      *mcpsdk.Server
	front       http.Handler // the chain every request passes (front.go)
	sdk         http.Handler // the go-sdk handler, for anonymous methods
	authed      http.Handler // the go-sdk handler behind auth.RequireBearerToken
	// streamed is authed answering with an event stream, for the calls that
	// wait and asked for progress notifications (streamedCall).
	streamed http.Handler
	// waits are the ask_owner calls waiting for an answer; progressEvery how
	// often each looks by itself and reports progress.
	waits         *store.QuestionWaits
	waitSlots     *waitSlots
	progressEvery time.Duration
	// registry holds every tool by name, as both ways of answering a
	// tools/call run it (the SDK's handler and answerPlainCall).
	registry map[string]*tool
	// built are the SDK's answers that are sent again as they are
	// (built_answers.go).
	built map[builtKey]builtAnswer
	tools *metrics.Tools
	// sdkOnly makes every request go to the SDK (tests: the reference the
	// answers to plain calls are compared with).
	sdkOnly bool
}

// New builds the MCP server once, with every tool registered.
func New(opt Options) *Handler {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sdkLog := sdkLogger(log)
	base := strings.TrimRight(opt.BaseURL, "/")
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		panic(fmt.Sprintf("mcp: BaseURL %q is not an absolute URL", opt.BaseURL))
	}
	issuer := u.Scheme + "://" + u.Host
	h := &Handler{
		store:         opt.Store,
		log:           log,
		issuer:        issuer,
		resource:      base + "/mcp",
		metadataURL:   issuer + "/.well-known/oauth-protected-resource" + strings.TrimRight(u.Path, "/") + "/mcp",
		registry:      map[string]*tool{},
		progressEvery: defaultProgressEvery,
		sdkOnly:       opt.SDKOnly,
		waitSlots:     newWaitSlots(opt.WaitLimits),
	}
	h.server = mcpsdk.NewServer(&mcpsdk.Implementation{Name: "osfoundry", Title: "osFoundry", Version: "1"}, &mcpsdk.ServerOptions{
		Instructions: "Report to the people who own your work: claim_connected_profile once, keep set_status current, " +
			"post_session_note only what a person must read. A result's last line says when mail for you is unread: " +
			"read_session_mail, answer with reply_to_sender.",
		Capabilities: capabilities,
		Logger:       sdkLog,
	})
	h.addClaimConnectedProfile()
	h.addSetStatus()
	h.addListAgents()
	h.addListSessions()
	h.addReadSessionState()
	h.addReadSessionMail()
	h.addPostSessionNote()
	h.addReplyToSender()
	h.addPollResourceEvents()
	h.addAskOwner()
	h.server.AddReceivingMiddleware(onlyImplemented, h.listToolsMiddleware)
	h.tools = observedTools(opt.Metrics, h.registry)

	h.sdk = mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return h.server }, &mcpsdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       sdkLog,
		// The app's Host check (inbound.RequireHost) and the front's Origin
		// check replace the SDK's loopback-only guard, which would refuse
		// the configured public host. The body reaches the SDK already
		// read and bounded by the front (limitBody, parse).
		DisableLocalhostProtection: true,
	})
	h.authed = auth.RequireBearerToken(verifiedToken, &auth.RequireBearerTokenOptions{ResourceMetadataURL: h.metadataURL})(h.sdk)
	h.built = h.buildAnswers()
	stream := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return h.server }, &mcpsdk.StreamableHTTPOptions{
		Stateless: true, Logger: sdkLog, DisableLocalhostProtection: true,
	})
	h.streamed = auth.RequireBearerToken(verifiedToken, &auth.RequireBearerTokenOptions{ResourceMetadataURL: h.metadataURL})(stream)
	listener := opt.Listener
	if listener == nil {
		listener = opt.Store.NewListener(log)
	}
	h.waits = opt.Store.NewQuestionWaits(listener)
	h.front = h.newFront()
	return h
}

// EndWaits ends the ask_owner calls waiting for an answer, now and from now
// on: each answers with its question as it stands (open, most likely).
// Call it when shutdown starts, so that the drain does not wait for them.
func (h *Handler) EndWaits() { h.waits.End() }

// Waiting counts the ask_owner calls waiting for an answer.
func (h *Handler) Waiting() int { return h.waits.Waiting() }

// Server returns the MCP server, for tests and benchmarks.
func (h *Handler) Server() *mcpsdk.Server { return h.server }

// securityScheme is one entry of a tool's securitySchemes.
type securityScheme struct {
	Type   string   `json:"type"`
	Scopes []string `json:"scopes"`
}

func schemesFor(scope string) []securityScheme {
	return []securityScheme{{Type: "oauth2", Scopes: []string{scope}}}
}

// tool is a registered tool: its scope, and run, which answers a call as
// the caller with the raw arguments (nil when absent).
type tool struct {
	scope string
	run   func(ctx context.Context, c *caller, args json.RawMessage) (*mcpsdk.CallToolResult, error)
	// ownsUnread marks a tool that counts the unread hint of its result
	// itself (read_session_mail: what remains after its read), so that the
	// token's check of its call need not.
	ownsUnread bool
}

// addTool registers a tool. Its run checks the arguments against the
// hand-written input schema (argumentsSchema words each violation) and
// decodes them into In before fn runs. fn's result becomes the structured
// content (and the same JSON as text), its errors isError results when an
// agent can act on them (refusal, store validation and access errors) and an
// opaque JSON-RPC internal error otherwise. Both kinds of result end with the
// caller's unread hint (withUnread). The SDK's handler of the tool verifies
// the caller again and calls run; answerPlainCall calls the same run.
func addTool[In any](h *Handler, scope string, t *mcpsdk.Tool, fn func(context.Context, *caller, In) (any, error)) {
	t.Meta = mcpsdk.Meta{"securitySchemes": schemesFor(scope)}
	args := compileArguments(t.Name, t.InputSchema.(json.RawMessage))
	name := t.Name
	rt := &tool{scope: scope}
	run := func(ctx context.Context, c *caller, raw json.RawMessage) (*mcpsdk.CallToolResult, error) {
		out, err := runTool(ctx, raw, args, c, fn)
		if cerr := c.settle(ctx, h.store, rt.ownsUnread, err != nil); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			err = h.toolError(ctx, name, err)
			var we *jsonrpc.Error
			if errors.As(err, &we) {
				return nil, we
			}
			res, structured := errorResultOf(err)
			return withUnread(res, structured, c.Unread)
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("mcp: %s: marshal result: %w", name, err)
		}
		res := &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: string(b)}}}
		if w, ok := out.(worded); ok {
			for _, l := range w.lines() {
				res.Content = append(res.Content, &mcpsdk.TextContent{Text: "\n" + l})
			}
		}
		return withUnread(res, b, c.Unread)
	}
	rt.run = func(ctx context.Context, c *caller, raw json.RawMessage) (*mcpsdk.CallToolResult, error) {
		start := time.Now()
		res, err := run(ctx, c, raw)
		ranToolIn(ctx, name, outcomeOf(res, err), time.Since(start))
		return res, err
	}
	h.registry[name] = rt
	h.server.AddTool(t, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		c, err := callerFrom(ctx, req)
		if err != nil {
			return errorResult(err), nil
		}
		return rt.run(withProgress(ctx, req), c, req.Params.Arguments)
	})
}

// worded is a tool result that also says something in words: each of its
// lines follows the JSON as a text content of its own, starting on a line of
// its own for clients that join text blocks (the unread hint still comes last).
type worded interface{ lines() []string }

// runTool checks and decodes the arguments and runs fn as the caller.
func runTool[In any](ctx context.Context, raw json.RawMessage, args *argumentsSchema, c *caller, fn func(context.Context, *caller, In) (any, error)) (any, error) {
	if msg := args.check(raw); msg != "" {
		return nil, refusal(msg)
	}
	var in In
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, refusalf("Invalid arguments: %v", err)
		}
	}
	return fn(ctx, c, in)
}

// errorResult is the isError tool result carrying err's text.
func errorResult(err error) *mcpsdk.CallToolResult {
	res := &mcpsdk.CallToolResult{}
	res.SetError(err)
	return res
}

// caller is the verified identity a tool call acts as. Its Unread is the
// hint the result carries: as the token check counted it, unless the tool
// knows better (read_session_mail sets what remains after its read).
type caller struct {
	store.TokenInfo
	// check is the token's check when it travels with the call's first
	// statement (verifyToken), nil when the token was checked before.
	check *store.TokenCheck
}

// checkRefused is a call whose token's check refused it or failed:
// answerPlainCall answers it as the front answers a token it cannot accept.
type checkRefused struct{ err error }

func (c checkRefused) Error() string { return c.err.Error() }

func (c checkRefused) Unwrap() error { return c.err }

// settle waits for the token's check of a call that sent it with its first
// statement (running it now when none was sent) and takes the unread hint
// from it, or, for a tool that counts its own (ownsUnread) and failed
// before it could, counts it (with the check, when it was still to be sent).
// A check that refused or failed is a checkRefused.
func (c *caller) settle(ctx context.Context, st *store.Store, ownsUnread, failed bool) error {
	if c.check == nil {
		return nil
	}
	var counted store.Unread
	var countErr error
	if ownsUnread && failed {
		counted, countErr = st.AsCaller(c.check).CountUnread(ctx, c.ConnectionID)
	}
	u, err := c.check.Result(ctx)
	switch {
	case err != nil:
		return checkRefused{err}
	case countErr != nil:
		return countErr
	case !ownsUnread:
		c.Unread = u
	case failed:
		c.Unread = counted
	}
	return nil
}

// callerFrom returns the token info the front verified (a copy, which
// the tool may update), and the check that travels with the call's first
// statement, if any. The scope was checked once, in front (challengeScope),
// or is checked by that check.
func callerFrom(ctx context.Context, req *mcpsdk.CallToolRequest) (*caller, error) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil, refusal("Authentication required")
	}
	ti, ok := req.Extra.TokenInfo.Extra[tokenInfoKey].(*store.TokenInfo)
	if !ok {
		return nil, refusal("Authentication required")
	}
	return &caller{TokenInfo: *ti, check: deferredFrom(ctx)}, nil
}

// refusal is a problem the agent can fix; its text goes back as an isError
// tool result.
type refusal string

func (r refusal) Error() string { return string(r) }

func refusalf(format string, args ...any) refusal { return refusal(fmt.Sprintf(format, args...)) }

// The refusals every tool shares, named so an agent can act on them.
const (
	msgClaimFirst  = "Claim a profile first: call claim_connected_profile with a handle and display_name."
	msgNotInvited  = "not invited to this session: an owner must invite this connection before it can read or post there."
	msgNoSession   = "session not found: no session with this session_type and session_id in your workspace (list_sessions shows yours)."
	msgInternalErr = "internal error"
	msgUnavailable = "osFoundry cannot reach its database right now; retry in a few seconds"
)

// toolError turns an error of a tool into what the agent sees. Store access
// and validation errors become isError results naming the rule; anything
// else is logged and answered with a JSON-RPC internal error that carries no
// detail.
func (h *Handler) toolError(ctx context.Context, tool string, err error) error {
	var r refusal
	var fe *store.FieldError
	var wl *store.WriteLimited
	switch {
	case errors.As(err, &r):
		return r
	case errors.As(err, &wl):
		return wl
	case errors.As(err, &fe):
		return refusalf("%s: %s", fe.Field, fe.Message)
	case errors.Is(err, store.ErrNoProfile):
		return refusal(msgClaimFirst)
	case errors.Is(err, store.ErrForbidden):
		return refusal(msgNotInvited)
	case errors.Is(err, store.ErrNotFound):
		return refusal(msgNoSession)
	}
	if ctx.Err() != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "request cancelled"}
	}
	if store.IsUnavailable(err) {
		h.log.WarnContext(ctx, "mcp tool failed: database unavailable", "tool", tool, "err", err)
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msgUnavailable}
	}
	h.log.ErrorContext(ctx, "mcp tool failed", "tool", tool, "err", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msgInternalErr}
}
