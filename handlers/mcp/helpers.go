package mcp

// ptr returns a pointer to v, for the optional fields of SDK and schema types.
func ptr[T any](v T) *T { return &v }
