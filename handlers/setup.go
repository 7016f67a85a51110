package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

const setupTitle = "Create the first owner account"

// setupForm creates the first owner, while there is none.
func (s *Server) setupForm(c echo.Context) error {
	has, err := s.store.HasOwner(c.Request().Context())
	if err != nil {
		return err
	}
	if has {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	return web.Render(c, http.StatusOK, setupTitle, views.SetupPage(views.SetupForm{}))
}

// setupSubmit creates the first owner with the setup code printed at start,
// throttled per address; once an owner exists it sends to sign-in unhashed.
func (s *Server) setupSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	has, err := s.store.HasOwner(ctx)
	if err != nil {
		return err
	}
	if has {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	f := views.SetupForm{
		Email:       c.FormValue("email"),
		DisplayName: c.FormValue("display_name"),
		Workspace:   c.FormValue("workspace"),
	}
	addr := c.RealIP()
	try, err := s.store.ReserveAttempt(ctx, store.ActionSetup, addr, store.AttemptKey{FreeTries: web.SetupFreeTries})
	if err != nil {
		return err
	}
	if !try.Allowed {
		f.Errors = views.FormErrors{"form": web.RefuseAttempt(c, try)}
		return web.Render(c, http.StatusTooManyRequests, setupTitle, views.SetupPage(f))
	}
	o, err := s.store.CreateFirstOwner(ctx, store.NewOwner{
		Email: f.Email, DisplayName: f.DisplayName, Password: c.FormValue("password"), WorkspaceName: f.Workspace,
	}, c.FormValue("setup_code"))
	switch {
	case errors.Is(err, store.ErrInvalid):
		f.Errors = web.FormErrors(err)
		return web.Render(c, http.StatusUnprocessableEntity, setupTitle, views.SetupPage(f))
	case errors.Is(err, store.ErrConflict):
		return c.Redirect(http.StatusSeeOther, "/login")
	case err != nil:
		return err
	}
	s.log.Info("first owner created", "owner_id", o.ID, "workspace_id", o.WorkspaceID)
	if err := s.store.AttemptSucceeded(ctx, store.ActionSetup, addr, ""); err != nil {
		return err
	}
	if err := s.sessions.SignIn(c, o); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/")
}
