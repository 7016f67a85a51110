package mcp

import (
	"context"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/metrics"
)

// observedTools resolves the tool call series of every registered tool.
func observedTools(m *metrics.Metrics, registry map[string]*tool) *metrics.Tools {
	if m == nil {
		m = metrics.New()
	}
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	return m.Tools(names...)
}

// observeTools times each tools/call that reaches the SDK, from its dispatch
// to its result, and counts it by outcome: a result, an isError result, or a
// JSON-RPC error.
func (h *Handler) observeTools(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		outcome := metrics.OK
		if err != nil {
			outcome = metrics.Failed
		} else if r, ok := res.(*mcpsdk.CallToolResult); ok && r.IsError {
			outcome = metrics.IsError
		}
		name := ""
		if p, ok := req.GetParams().(*mcpsdk.CallToolParamsRaw); ok {
			name = p.Name
		}
		h.tools.Observe(name, outcome, time.Since(start))
		return res, err
	}
}

// observeAnswered counts the tool calls among calls that ServeHTTP answered
// itself, before any tool ran (a refusal, an early error), timed from start.
func (h *Handler) observeAnswered(calls []call, outcome metrics.Outcome, start time.Time) {
	d := time.Since(start)
	for _, c := range calls {
		if c.Method == "tools/call" {
			h.tools.Observe(c.Params.Name, outcome, d)
		}
	}
}
