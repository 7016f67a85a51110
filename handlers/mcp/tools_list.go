package mcp

import (
	"context"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// listToolsResult is the SDK's tools/list result with each tool as
// listedTool.
type listToolsResult struct {
	*mcpsdk.ListToolsResult
	Tools []listedTool `json:"tools"`
}

// listedTool is a tool as tools/list shows it: with the top-level
// securitySchemes mcp.Tool has no field for, and with only the annotations
// a client acts on.
type listedTool struct {
	*mcpsdk.Tool
	Annotations     annotations      `json:"annotations"`
	SecuritySchemes []securityScheme `json:"securitySchemes"`
}

// annotations are the hints clients decide by (Codex asks before a write
// unless destructiveHint is false and openWorldHint is not true). A read-only
// tool leaves out destructiveHint, which MCP gives meaning only for writers;
// no tool sends idempotentHint, which no client acts on for a stateless
// server (the descriptions say how to retry).
type annotations struct {
	ReadOnlyHint    bool  `json:"readOnlyHint"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

func listedAnnotations(a *mcpsdk.ToolAnnotations) annotations {
	if a.ReadOnlyHint {
		return annotations{ReadOnlyHint: true, OpenWorldHint: a.OpenWorldHint}
	}
	return annotations{DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
}

// listToolsMiddleware shows each tool of tools/list as listedTool.
func (h *Handler) listToolsMiddleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*mcpsdk.ListToolsResult)
		if method != "tools/list" || err != nil || !ok {
			return res, err
		}
		out := &listToolsResult{ListToolsResult: lr, Tools: make([]listedTool, 0, len(lr.Tools))}
		for _, t := range lr.Tools {
			out.Tools = append(out.Tools, listedTool{Tool: t, Annotations: listedAnnotations(t.Annotations),
				SecuritySchemes: schemesFor(h.registry[t.Name].scope)})
		}
		return out, nil
	}
}
