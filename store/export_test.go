package store

// The statements of the hot paths, for tests that explain their plans.
var (
	UseAccessTokenSQL = useAccessTokenSQL
	ReadAgentMailSQL  = readAgentMailSQL
)
