package agent

import "context"

const msgStopNote = "osFoundry: before this turn ends, note(s) addressed to this agent arrived that it has not seen. " +
	"Weigh them and act on what they ask of this task (answer with reply_to_sender if a reply is wanted), then finish."

// stopCheck lets a turn with an unread note for the agent go on once, with
// the notes as the reason; reading marks them read, so none blocks twice.
func stopCheck(ctx context.Context, c *client, in hookInput) (string, error) {
	if in.StopHookActive {
		return "", nil
	}
	res, err := c.callTool(ctx, "list_sessions", nil)
	if err != nil {
		return "", err
	}
	text, err := mailContext(ctx, c, res.unread())
	if text == "" {
		return "", err
	}
	return msgStopNote + "\n\n" + text, err
}
