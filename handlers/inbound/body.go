package inbound

// MaxBodyBytes caps every request body, the MCP front's included.
const MaxBodyBytes = 1 << 20
