package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// setupForm is GET /setup: the form that creates the first owner account,
// while there is none (then it is the sign-in page).
func (s *Server) setupForm(c echo.Context) error {
	has, err := s.store.HasOwner(c.Request().Context())
	if err != nil {
		return err
	}
	if has {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	return s.render(c, http.StatusOK, "Create the first owner account", views.SetupPage(views.SetupForm{}))
}

// setupSubmit is POST /setup: the first owner and workspace, signed in.
func (s *Server) setupSubmit(c echo.Context) error {
	f := views.SetupForm{
		Email:       c.FormValue("email"),
		DisplayName: c.FormValue("display_name"),
		Workspace:   c.FormValue("workspace"),
	}
	o, err := s.store.CreateFirstOwner(c.Request().Context(), store.NewOwner{
		Email: f.Email, DisplayName: f.DisplayName, Password: c.FormValue("password"), WorkspaceName: f.Workspace,
	})
	var fe *store.FieldError
	switch {
	case errors.As(err, &fe):
		f.Errors = views.FormErrors{fe.Field: fe.Message}
		return s.render(c, http.StatusUnprocessableEntity, "Create the first owner account", views.SetupPage(f))
	case errors.Is(err, store.ErrConflict):
		return c.Redirect(http.StatusSeeOther, "/login")
	case err != nil:
		return err
	}
	s.log.Info("first owner created", "owner_id", o.ID, "workspace_id", o.WorkspaceID)
	if err := s.signIn(c, o); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/")
}
