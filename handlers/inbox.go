package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// inboxFilter reads the inbox's filter from the query.
func inboxFilter(c echo.Context) store.InboxFilter {
	show := c.QueryParam("show")
	return store.InboxFilter{
		Unread:    show == views.InboxShowUnread,
		Questions: show == views.InboxShowQuestions,
		Mine:      show == views.InboxShowMine,
		ProjectID: web.Int64(c.QueryParam("project")),
		AgentID:   web.Int64(c.QueryParam("agent")),
		Before:    web.Int64(c.QueryParam("before")),
		After:     web.Int64(c.QueryParam("after")),
	}
}

// inbox is the inbox page; with ?live=1 (htmx) only the rows newer than
// ?after=, or 204.
func (s *Server) inbox(c echo.Context) error {
	o := web.Owner(c)
	ctx := c.Request().Context()
	f := inboxFilter(c)
	rows, err := s.store.Inbox(ctx, o.WorkspaceID, o.ID, f, store.InboxPageSize)
	if err != nil {
		return err
	}
	more := len(rows) > store.InboxPageSize
	if more {
		rows = rows[:store.InboxPageSize]
	}
	if web.IsHTMX(c) && c.QueryParam("live") != "" {
		if len(rows) == 0 {
			return web.NoContent(c)
		}
		return web.Render(c, http.StatusOK, "", views.InboxRows(rows, f.Questions))
	}
	v := views.InboxView{Filter: f, Rows: rows, HasOlder: more}
	if f.Before == 0 && !f.Questions {
		if v.Questions, err = s.store.OpenQuestions(ctx, o.WorkspaceID, f.ProjectID, 0, store.InboxPageSize); err != nil {
			return err
		}
		if v.Approvals, err = s.approvalsView(c, 0); err != nil {
			return err
		}
	}
	if v.Projects, err = s.store.ListProjects(ctx, o.WorkspaceID); err != nil {
		return err
	}
	if v.Agents, err = s.store.ListAgentSenders(ctx, o.WorkspaceID); err != nil {
		return err
	}
	p := web.Page(c)
	p.Nav, p.UnreadScope = "inbox", "inbox"
	return web.Render(c, http.StatusOK, "Inbox", views.InboxPage(v))
}
