package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// inboxQuestions is the inbox's open questions, refetched when one changes.
func (s *Server) inboxQuestions(c echo.Context) error {
	o := web.Owner(c)
	project := web.Int64(c.QueryParam("project"))
	rows, err := s.store.OpenQuestions(c.Request().Context(), o.WorkspaceID, project, 0, store.InboxPageSize)
	if err != nil {
		return err
	}
	return web.Render(c, http.StatusOK, "Questions waiting", views.InboxQuestions(rows, views.InboxQuestionsQuery(project)))
}
