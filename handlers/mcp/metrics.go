package mcp

import (
	"context"
	"net/http"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/metrics"
)

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

func outcomeOf(res *mcpsdk.CallToolResult, err error) metrics.Outcome {
	switch {
	case err != nil:
		return metrics.Failed
	case res != nil && res.IsError:
		return metrics.IsError
	}
	return metrics.OK
}

// tally is how the tool calls of one request ended: the tools that ran, or
// how the front answered the request itself, which wins.
type tally struct {
	mu       sync.Mutex
	ran      []ranTool
	answered *metrics.Outcome
}

type ranTool struct {
	name    string
	outcome metrics.Outcome
	took    time.Duration
}

func ranToolIn(ctx context.Context, name string, outcome metrics.Outcome, took time.Duration) {
	if req := requestFrom(ctx); req != nil {
		req.tally.mu.Lock()
		req.tally.ran = append(req.tally.ran, ranTool{name, outcome, took})
		req.tally.mu.Unlock()
	}
}

func (req *rpcRequest) answeredAs(outcome metrics.Outcome) {
	req.tally.mu.Lock()
	req.tally.answered = &outcome
	req.tally.mu.Unlock()
}

// count is the one place a tool call is counted, once the request is
// answered; a call that reached no tool failed, timed from the request's start.
func (h *Handler) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		req := requestFrom(r.Context())
		if req == nil {
			return
		}
		req.tally.mu.Lock()
		defer req.tally.mu.Unlock()
		ran := req.tally.ran
		for i := range req.messages {
			m := &req.messages[i]
			if m.Method != "tools/call" {
				continue
			}
			outcome, took := metrics.Failed, time.Since(req.start)
			if a := req.tally.answered; a != nil {
				outcome = *a
			} else if j := indexOfTool(ran, m.Params.Name); j >= 0 {
				outcome, took = ran[j].outcome, ran[j].took
				ran = append(ran[:j:j], ran[j+1:]...)
			}
			h.tools.Observe(m.Params.Name, outcome, took)
		}
	})
}

func indexOfTool(ran []ranTool, name string) int {
	for i, t := range ran {
		if t.name == name {
			return i
		}
	}
	return -1
}
