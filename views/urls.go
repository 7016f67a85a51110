package views

import (
	"fmt"
	"strings"
)

func sessionURL(id int64, rest ...string) string {
	return fmt.Sprintf("/sessions/%d", id) + strings.Join(rest, "")
}

func projectURL(id int64, rest ...string) string {
	return fmt.Sprintf("/projects/%d", id) + strings.Join(rest, "")
}

func webhookURL(projectID, endpointID int64, rest ...string) string {
	return fmt.Sprintf("/projects/%d/webhooks/%d", projectID, endpointID) + strings.Join(rest, "")
}

// NoteURL opens a note in place on its session page.
func NoteURL(sessionID, noteID int64) string {
	return fmt.Sprintf("/sessions/%d?note=%d#note-%d", sessionID, noteID, noteID)
}

// threadURL is a note's thread: the note and every reply down from it.
func threadURL(sessionID, noteID int64) string {
	return fmt.Sprintf("/sessions/%d/notes/%d", sessionID, noteID)
}
