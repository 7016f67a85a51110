package handlers

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// auditFilter reads the audit filters; a bad one is refused by name.
func auditFilter(c echo.Context) (store.AuditFilter, error) {
	var f store.AuditFilter
	for name, dst := range map[string]*int64{"person": &f.OwnerID, "project": &f.ProjectID, "before": &f.Before} {
		if v := c.QueryParam(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return f, echo.NewHTTPError(http.StatusBadRequest, "The "+name+" filter must be a positive number.")
			}
			*dst = n
		}
	}
	if k := store.AuditKind(c.QueryParam("kind")); k != "" {
		if !k.Known() {
			return f, echo.NewHTTPError(http.StatusBadRequest, "The kind filter names no kind of audit row.")
		}
		f.Kind = k
	}
	return f, nil
}

func (s *Server) auditPage(c echo.Context) error {
	f, err := auditFilter(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	v := views.AuditView{Filter: f, Kinds: store.AuditKinds()}
	f.Limit = store.AuditPageSize + 1
	if v.Entries, err = s.store.ListAudit(ctx, web.Actor(c), f); err != nil {
		return err
	}
	if len(v.Entries) > store.AuditPageSize {
		v.Entries = v.Entries[:store.AuditPageSize]
		v.Older = v.Entries[len(v.Entries)-1].ID
	}
	if v.People, err = s.store.ListPeople(ctx, web.Actor(c)); err != nil {
		return err
	}
	if v.Projects, err = s.store.ListProjects(ctx, web.Owner(c).WorkspaceID); err != nil {
		return err
	}
	web.Page(c).Nav = "audit"
	return web.Render(c, http.StatusOK, "Audit log", views.AuditPage(v))
}
