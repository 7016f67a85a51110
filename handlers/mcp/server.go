// Package mcp serves the MCP endpoint agents sign in to: ten tools over
// stateless Streamable HTTP, so that any replica answers any request.
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
	Store   *store.Store
	BaseURL string // the app's public origin, e.g. http://localhost:8080; the resource is BaseURL + "/mcp"
	Logger  *slog.Logger
	Metrics *metrics.Metrics
	// Listener ends ask_owner's waits when the answer comes on any replica
	// (nil: a waiting call looks by itself every few seconds).
	Listener *store.Listener
	// SDKOnly has the SDK answer every request, so that make bench can
	// measure the front's own answers against it.
	SDKOnly    bool
	WaitLimits WaitLimits
}

// Handler serves /mcp and the protected-resource metadata.
type Handler struct {
	store         *store.Store
	log           *slog.Logger
	issuer        string // origin of BaseURL, no trailing slash
	resource      string // <base>/mcp: the audience every token must be bound to
	metadataURL   string // <origin>/.well-known/oauth-protected-resource/mcp
	server        *mcpsdk.Server
	front         http.Handler // the chain every request passes (front.go)
	sdk           http.Handler // for anonymous methods
	authed        http.Handler // sdk behind auth.RequireBearerToken
	streamed      http.Handler // authed with an event stream, for waits that report progress
	waits         *store.QuestionWaits
	waitSlots     *waitSlots
	progressEvery time.Duration
	registry      map[string]*tool // run by the SDK's handler and by answerPlainCall alike
	built         map[builtKey]builtAnswer
	tools         *metrics.Tools
	sdkOnly       bool
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
		// The app's Host check and the front's Origin check replace the
		// SDK's loopback-only guard, which would refuse the public host.
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

// EndWaits ends the ask_owner calls waiting, now and from now on, so that
// the shutdown's drain need not wait for them.
func (h *Handler) EndWaits() { h.waits.End() }

// Waiting counts the ask_owner calls waiting for an answer.
func (h *Handler) Waiting() int { return h.waits.Waiting() }

// Server returns the MCP server, for tests and benchmarks.
func (h *Handler) Server() *mcpsdk.Server { return h.server }

type securityScheme struct {
	Type   string   `json:"type"`
	Scopes []string `json:"scopes"`
}

func schemesFor(scope string) []securityScheme {
	return []securityScheme{{Type: "oauth2", Scopes: []string{scope}}}
}

type tool struct {
	scope string
	run   func(ctx context.Context, c *caller, args json.RawMessage) (*mcpsdk.CallToolResult, error)
	// ownsUnread marks a tool that counts its result's unread hint itself
	// (read_session_mail: what remains after its read), so that the token's
	// check need not.
	ownsUnread bool
}

// addTool registers a tool whose run the SDK's handler and answerPlainCall
// share: fn's result becomes the structured content and the same JSON as
// text, its errors isError results when the agent can act on them, else an
// opaque internal error.
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

// worded is a tool result that also says something in words, each line a
// text content of its own for clients that join text blocks.
type worded interface{ lines() []string }

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

func errorResult(err error) *mcpsdk.CallToolResult {
	res := &mcpsdk.CallToolResult{}
	res.SetError(err)
	return res
}

type caller struct {
	store.TokenInfo
	check *store.TokenCheck // when it travels with the call's first statement
}

type checkRefused struct{ err error }

func (c checkRefused) Error() string { return c.err.Error() }

func (c checkRefused) Unwrap() error { return c.err }

// settle waits for the token's check sent with the call's first statement
// (running it now when none was sent) and takes the unread hint from it; a
// tool that counts its own and failed before it could has it counted here.
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

// callerFrom returns a copy of the token info the front verified, which the
// tool may update; the scope was checked once, in front or by the check.
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

// refusal is a problem the agent can fix, answered as an isError result.
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

// toolError turns a tool's error into what the agent sees: the rule it
// broke, or an internal error that carries no detail.
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
