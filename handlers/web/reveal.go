package web

import (
	"encoding/json"

	"github.com/labstack/echo/v4"
)

// keyReveal holds a secret just created across the redirect to the page that
// shows it once, so that a reload never submits the form again.
const keyReveal = "reveal"

// StashReveal keeps v for the next page named by key.
func StashReveal(c echo.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	sess := cookieSession(c)
	sess.Values[keyReveal] = key + "\n" + string(b)
	return sess.Save(c.Request(), c.Response())
}

// TakeReveal returns and forgets what StashReveal kept for key.
func TakeReveal(c echo.Context, key string, v any) (bool, error) {
	sess := cookieSession(c)
	raw, _ := sess.Values[keyReveal].(string)
	if raw == "" || len(raw) <= len(key) || raw[:len(key)+1] != key+"\n" {
		return false, nil
	}
	delete(sess.Values, keyReveal)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return false, err
	}
	return json.Unmarshal([]byte(raw[len(key)+1:]), v) == nil, nil
}
