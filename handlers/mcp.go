package handlers

import (
	"github.com/osfoundry/osfoundry/handlers/mcp"
)

// initMCP builds the MCP endpoint and its protected-resource metadata once.
func (s *Server) initMCP() {
	h := mcp.New(mcp.Options{Store: s.store, BaseURL: s.cfg.BaseURL, Logger: s.log, Metrics: s.metrics})
	s.mcp = h
	s.mcpMeta = h.ProtectedResourceMetadata()
}
