package handlers

import (
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// search is the search page: ?q= (words and filters, store.ParseSearch) over
// the notes of the owner's workspace, newest first, paged with ?before=.
func (s *Server) search(c echo.Context) error {
	o := currentOwner(c)
	q := c.QueryParam("q")
	v := views.SearchView{Query: q}
	p := s.page(c)
	p.Query, p.UnreadScope = q, "workspace"
	switch {
	case utf8.RuneCountInString(q) > store.MaxSearchLen:
		v.Error = fmt.Sprintf("Use at most %d characters.", store.MaxSearchLen)
	default:
		v.Search = store.ParseSearch(q)
	}
	if !v.Search.Empty() {
		results, stopped, err := s.store.SearchNotes(c.Request().Context(), o.WorkspaceID, o.ID, v.Search,
			int64Param(c.QueryParam("before")), store.SearchPageSize)
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
	return s.render(c, http.StatusOK, title, views.SearchPage(v))
}
