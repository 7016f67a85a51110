package handlers

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// subscription is a browser's PushSubscription.toJSON().
type subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// deviceSubscribe subscribes this browser to pushes: 201 with the device, or
// 422 naming the field.
func (s *Server) deviceSubscribe(c echo.Context) error {
	var in subscription
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, 16<<10))
	if err := dec.Decode(&in); err != nil {
		return c.JSON(http.StatusUnprocessableEntity, map[string]string{"field": "body", "error": "send the browser's push subscription as JSON"})
	}
	key := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(trimPad(s))
		if err != nil {
			return nil
		}
		return b
	}
	o := web.Owner(c)
	ua := c.Request().UserAgent()
	sub, err := s.store.SubscribePush(c.Request().Context(), o.WorkspaceID, o.ID, store.PushSubscribe{
		Endpoint: in.Endpoint, P256dh: key(in.Keys.P256dh), Auth: key(in.Keys.Auth), Name: views.DeviceName(ua), UserAgent: ua,
	}, s.cfg.AllowPrivateTargets)
	if fe := store.FieldErrorsOf(err); fe != nil {
		return c.JSON(http.StatusUnprocessableEntity, map[string]string{"field": fe[0].Field, "error": fe[0].Field + ": " + fe[0].Message})
	}
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No such owner")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"id": sub.ID, "name": sub.Name})
}

func trimPad(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}
