package agent

import "context"

// msgStopNote leads the reason of a Stop that keeps the turn going.
const msgStopNote = "osFoundry: before this turn ends, note(s) addressed to this agent arrived that it has not seen. " +
	"Weigh them and act on what they ask of this task (answer with reply_to_sender if a reply is wanted), then finish."

// stopCheck is the Stop rule: a turn about to end while a note addressed
// to the agent is unread goes on once, with the fenced notes as the reason
// the model reads. Reading them marks them read, so no note blocks twice;
// the Stop after a block (stop_hook_active) lets the turn end.
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
