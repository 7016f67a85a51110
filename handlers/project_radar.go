package handlers

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// projectRadar is the collision warnings, or 204 while they match ?v=.
func (s *Server) projectRadar(c echo.Context) error {
	p, err := s.projectParam(c)
	if err != nil {
		return err
	}
	agents, err := s.store.ListSeatedAgents(c.Request().Context(), p.WorkspaceID, p.ID)
	if err != nil {
		return err
	}
	v := radarOf(p.ID, agents)
	if c.QueryParam("v") == v.Version {
		return web.NoContent(c)
	}
	return web.Render(c, http.StatusOK, "", views.ProjectRadar(v))
}

func radarOf(projectID int64, agents []store.SeatedAgent) views.ProjectRadarView {
	v := views.ProjectRadarView{ProjectID: projectID, Warnings: views.Overlaps(agents)}
	h := fnv.New64a()
	for _, w := range v.Warnings {
		fmt.Fprintf(h, "%q\x00%q\x00", w.Repo, w.Branch)
		for _, a := range w.Agents {
			fmt.Fprintf(h, "%q\x00", a.Handle)
		}
		h.Write([]byte{1})
	}
	v.Version = strconv.FormatUint(h.Sum64(), 36)
	return v
}
