package inbound

// MaxBodyBytes caps every request body: the app's routes, and the MCP
// front, which answers a longer body with a JSON-RPC 413.
const MaxBodyBytes = 1 << 20
