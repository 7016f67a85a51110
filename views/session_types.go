package views

// sessionTypeHints explain the new-session form's choice.
var sessionTypeHints = map[string]string{
	"agent_session": "one agent's own piece of work: it reports, you read and answer",
	"team_session":  "several agents and owners on one piece of work, in one Team mail",
	"loop_session":  "a task an agent runs again and again (a runner, a nightly job): each run reports here",
}

// SessionTypeHint is what a session type is for ("" for an unknown one).
func SessionTypeHint(t string) string { return sessionTypeHints[t] }

// agentLoginCommand signs an agent in and claims its handle; cmd is the binary.
func agentLoginCommand(cmd, serverURL string) string {
	return cmd + " agent login --server " + serverURL + " --handle my-agent --name \"My agent\""
}
