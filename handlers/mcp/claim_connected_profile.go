package mcp

import (
	"context"
	"errors"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
)

var claimConnectedProfileSchema = object{
	properties: []property{
		{"handle", schema{Type: "string", Pattern: store.HandlePattern.String()}},
		{"display_name", textBetween(1, store.MaxDisplayNameLen)},
	},
	required: []string{"handle", "display_name"},
}

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
		Name:        "claim_connected_profile",
		Description: "Your profile, handle unique in your workspace: once, before any tool that writes; again to update.",
		InputSchema: claimConnectedProfileSchema.raw(),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.claimConnectedProfile)
}

func (h *Handler) claimConnectedProfile(ctx context.Context, c *caller, in claimArgs) (any, error) {
	p, err := h.store.AsCaller(c.check).ClaimProfile(ctx, c.WorkspaceID, c.ConnectionID, in.Handle, in.DisplayName)
	if errors.Is(err, store.ErrConflict) {
		return nil, refusalf("handle taken: another agent of this workspace is %q; choose another handle.", in.Handle)
	}
	if errors.Is(err, store.ErrHandleRevoked) {
		return nil, refusalf("handle taken: %q belongs to a revoked connection of this workspace. If that agent is you, "+
			"sign in again and have the owner choose \"Sign in again as @%s\" on the consent page: that connection comes back "+
			"with its handle, sender slug and invitations. Otherwise choose another handle.", in.Handle, in.Handle)
	}
	if err != nil {
		return nil, err
	}
	return profileOut{Handle: p.Handle, DisplayName: p.DisplayName, SenderSlug: p.SenderSlug}, nil
}
