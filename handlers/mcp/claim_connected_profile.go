package mcp

import (
	"context"
	"encoding/json"
	"errors"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

const claimConnectedProfileSchema = `{"type":"object","properties":{` +
	`"handle":{"type":"string","pattern":"^[a-z0-9][a-z0-9-]{1,30}$"},` +
	`"display_name":{"type":"string","minLength":1,"maxLength":80}},` +
	`"required":["handle","display_name"],"additionalProperties":false}`

type claimArgs struct {
	Handle      string `json:"handle"`
	DisplayName string `json:"display_name"`
}

type profileOut struct {
	Handle      string `json:"handle"`
	DisplayName string `json:"display_name"`
	SenderSlug  string `json:"sender_slug"`
}

func (h *Handler) addClaimConnectedProfile() {
	addTool(h, store.ScopeWrite, &mcpsdk.Tool{
		Name: "claim_connected_profile",
		Description: "Claim this connection's agent profile: a handle unique in your workspace and a display name. " +
			"Call it once before set_status or post_session_note; calling again updates display_name (or the handle). " +
			"Returns your sender_slug, the stable address owners reply to.",
		InputSchema: json.RawMessage(claimConnectedProfileSchema),
		Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, h.claimConnectedProfile)
}

func (h *Handler) claimConnectedProfile(ctx context.Context, c *caller, in claimArgs) (any, error) {
	p, err := h.store.ClaimProfile(ctx, c.WorkspaceID, c.ConnectionID, in.Handle, in.DisplayName)
	if errors.Is(err, store.ErrConflict) {
		return nil, refusalf("handle taken: another agent of this workspace is %q; choose another handle.", in.Handle)
	}
	if err != nil {
		return nil, err
	}
	return profileOut{Handle: p.Handle, DisplayName: p.DisplayName, SenderSlug: p.SenderSlug}, nil
}

func ptr[T any](v T) *T { return &v }
