package handlers

import (
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// search finds notes of the workspace (store.ParseSearch), paged with ?before=.
func (s *Server) search(c echo.Context) error {
	o := web.Owner(c)
	q := c.QueryParam("q")
	v := views.SearchView{Query: q}
	p := web.Page(c)
	p.Query, p.UnreadScope = q, "workspace"
	switch {
	case utf8.RuneCountInString(q) > store.MaxSearchLen:
		v.Error = fmt.Sprintf("Use at most %d characters.", store.MaxSearchLen)
	default:
		v.Search = store.ParseSearch(q)
	}
	if !v.Search.Empty() {
		results, stopped, err := s.store.SearchNotes(c.Request().Context(), o.WorkspaceID, o.ID, v.Search,
			web.Int64(c.QueryParam("before")), store.SearchPageSize)
		if err != nil {
			return err
		}
		if len(results) > store.SearchPageSize {
			results, v.HasOlder = results[:store.SearchPageSize], true
		} else {
			v.StoppedBefore = stopped
		}
		v.Results = results
	}
	title := "Search"
	if q != "" {
		title = q + " — Search"
	}
	return web.Render(c, http.StatusOK, title, views.SearchPage(v))
}
