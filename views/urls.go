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
