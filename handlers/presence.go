package handlers

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// presenceView loads the sidebar and fingerprints what it would show.
func (s *Server) presenceView(c echo.Context, session *store.Session, p *store.Project) (views.PresenceView, error) {
	agents, err := s.store.ListSeatedAgents(c.Request().Context(), session.WorkspaceID, session.ProjectID)
	if err != nil {
		return views.PresenceView{}, err
	}
	return presenceOf(web.Page(c).Now, session.ID, *p, agents), nil
}

// presenceOf is the sidebar at now with the fingerprint of what it shows, the
// one version the poll and the live stream compare.
func presenceOf(now time.Time, sessionID int64, p store.Project, agents []store.SeatedAgent) views.PresenceView {
	h := fnv.New64a()
	fmt.Fprintf(h, "%q\x00", p.Name)
	str := func(v *string) string {
		if v == nil {
			return "\x01"
		}
		return *v
	}
	for _, a := range agents {
		fmt.Fprintf(h, "%d\x00%q\x00%q\x00%q\x00%s\x00%q\x00%q\x00%q\x00%q\x00", a.ConnectionID, a.Handle, a.DisplayName, a.ClientName,
			a.Presence, str(a.Status.Repo), str(a.Status.Branch), str(a.Status.Task), str(a.Overlap))
		if a.Status.UpdatedAt != nil {
			fmt.Fprintf(h, "%d\x00%s\x00%t\x00", a.Status.UpdatedAt.UnixMicro(), views.Ago(now, *a.Status.UpdatedAt), views.IsStale(now, a.Status.UpdatedAt))
		}
	}
	return views.PresenceView{SessionID: sessionID, Project: p, Agents: agents, Version: strconv.FormatUint(h.Sum64(), 36)}
}
