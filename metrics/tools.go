package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcome is how an MCP tool call ended.
type Outcome uint8

// The outcomes of a tool call, the values of the outcome label.
const (
	// OK is a tool result.
	OK Outcome = iota
	// IsError is a problem the agent can fix.
	IsError
	// Refused is a 401 or 403 before the tool runs.
	Refused
	// Failed is a JSON-RPC internal error (a bug, the database unreachable).
	Failed
	numOutcomes
)

var outcomeLabels = [numOutcomes]string{OK: "ok", IsError: "is_error", Refused: "refused", Failed: "error"}

// String is the outcome's label value.
func (o Outcome) String() string { return outcomeLabels[o] }

// unknownTool labels calls of a tool the server does not have.
const unknownTool = "unknown"

// Tools observes one MCP server's tool calls.
type Tools struct {
	by      map[string]*[numOutcomes]prometheus.Observer
	unknown *[numOutcomes]prometheus.Observer
}

// Tools resolves every tool's series, so they show from the start at zero.
func (m *Metrics) Tools(names ...string) *Tools {
	resolve := func(tool string) *[numOutcomes]prometheus.Observer {
		var s [numOutcomes]prometheus.Observer
		for o := range numOutcomes {
			s[o] = m.tools.WithLabelValues(tool, o.String())
		}
		return &s
	}
	t := &Tools{by: make(map[string]*[numOutcomes]prometheus.Observer, len(names)), unknown: resolve(unknownTool)}
	for _, n := range names {
		t.by[n] = resolve(n)
	}
	return t
}

// Observe records one call of the named tool.
func (t *Tools) Observe(tool string, o Outcome, d time.Duration) {
	s, ok := t.by[tool]
	if !ok {
		s = t.unknown
	}
	s[o].Observe(d.Seconds())
}
