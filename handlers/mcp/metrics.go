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

// outcomeOf is how a tool call ended, as the metrics count it: a JSON-RPC
// error (the tool failed; toolError chose it), an isError result (the agent
// can fix it), or a result. The calls the front answers before any tool
// runs are counted by observeAnswered.
func outcomeOf(res *mcpsdk.CallToolResult, err error) metrics.Outcome {
	switch {
	case err != nil:
		return metrics.Failed
	case res != nil && res.IsError:
		return metrics.IsError
	}
	return metrics.OK
}

// observe counts one tool call by its outcome, timed from start: the call
// as answered directly (answerPlainCall) or by the SDK (observeTools).
func (h *Handler) observe(tool string, start time.Time, res *mcpsdk.CallToolResult, err error) {
	h.tools.Observe(tool, outcomeOf(res, err), time.Since(start))
}

// observeTools times each tools/call that reaches the SDK, from its dispatch
// to its result, and counts it (observe).
func (h *Handler) observeTools(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		name := ""
		if p, ok := req.GetParams().(*mcpsdk.CallToolParamsRaw); ok {
			name = p.Name
		}
		r, _ := res.(*mcpsdk.CallToolResult)
		h.observe(name, start, r, err)
		return res, err
	}
}

// observeAnswered counts the tool calls of a request the front answered
// itself, before any tool ran (a refusal, an early error), timed from when
// it began reading the request.
func (h *Handler) observeAnswered(req *rpcRequest, outcome metrics.Outcome) {
	d := time.Since(req.start)
	for i := range req.messages {
		if m := &req.messages[i]; m.Method == "tools/call" {
			h.tools.Observe(m.Params.Name, outcome, d)
		}
	}
}
