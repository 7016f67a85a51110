package mcp

import (
	"context"
	"encoding/json"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

// defaultEventLimit is the page size when limit is omitted.
const defaultEventLimit = 50

var pollResourceEventsSchema = object{
	properties: append(sessionProps("resource_type", "resource_id"),
		property{"after_sequence", integerMin(0)},
		property{"limit", pageLimit(store.MaxEventPage, defaultEventLimit)}),
	required: []string{"resource_type", "resource_id", "after_sequence"},
}

type pollArgs struct {
	ResourceType  string `json:"resource_type"`
	ResourceID    string `json:"resource_id"`
	AfterSequence int64  `json:"after_sequence"`
	Limit         int    `json:"limit"`
}

type eventOut struct {
	Sequence  int64           `json:"sequence"`
	Kind      string          `json:"kind"`
	NoteID    *int64          `json:"note_id,omitempty"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"created_at"`
	// DeliveredAt is when the event's note was put into your context (a
	// hook or a channel); absent when it never was.
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

func (h *Handler) addPollResourceEvents() {
	addTool(h, store.ScopeRead, &mcpsdk.Tool{
		Name:        "poll_resource_events",
		Description: "Events after after_sequence, oldest first; pass next_sequence back, start at 0 or read_session_state's last_sequence.",
		InputSchema: pollResourceEventsSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.pollResourceEvents)
}

func (h *Handler) pollResourceEvents(ctx context.Context, c *caller, in pollArgs) (any, error) {
	if in.Limit == 0 {
		in.Limit = defaultEventLimit
	}
	events, next, err := h.store.AsCaller(c.check).PollEvents(ctx, c.WorkspaceID, c.ConnectionID, in.ResourceType, in.ResourceID, in.AfterSequence, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Events       []eventOut `json:"events"`
		NextSequence int64      `json:"next_sequence"`
	}{Events: make([]eventOut, 0, len(events)), NextSequence: next}
	for _, e := range events {
		out.Events = append(out.Events, eventOut{Sequence: e.Sequence, Kind: e.Kind, NoteID: e.NoteID, Payload: e.Payload, CreatedAt: e.CreatedAt, DeliveredAt: e.DeliveredAt})
	}
	return out, nil
}
