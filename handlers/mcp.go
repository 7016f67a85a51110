package handlers

import "net/http"

// initMCP builds the MCP endpoint. Until it is wired, /mcp answers 404.
func (s *Server) initMCP() {
	s.mcp = http.NotFoundHandler()
	s.mcpMeta = http.NotFoundHandler()
}
