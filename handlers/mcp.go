package handlers

import (
	"github.com/osfoundry/osfoundry/handlers/mcp"
	"github.com/osfoundry/osfoundry/store"
)

// initMCP builds the MCP endpoint and its resource metadata once.
func (s *Server) initMCP(l *store.Listener) {
	h := mcp.New(mcp.Options{Store: s.store, BaseURL: s.cfg.BaseURL, Logger: s.log, Metrics: s.metrics, Listener: l,
		SDKOnly: s.cfg.MCPSDKOnly, WaitLimits: s.cfg.WaitLimits})
	s.mcp = h
	s.mcpMeta = h.ProtectedResourceMetadata()
}
