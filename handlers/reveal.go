package handlers

import (
	"encoding/json"

	"github.com/labstack/echo/v4"
)

// keyReveal holds a secret a form has just created (a webhook's signing
// secret, a static token) across the redirect to the page that shows it.
const keyReveal = "reveal"

// A secret is shown once, on the page a form redirects to, so that reloading
// that page never submits the form again (a second endpoint, a second token).
// Between the two it rides in the cookie session, which is signed, encrypted
// when the cookie key has its encryption half (the generated one does), and
// HttpOnly; the page takes it out as it shows it.

// stashReveal keeps v for the next page named by key.
func (s *Server) stashReveal(c echo.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	sess := cookieSession(c)
	sess.Values[keyReveal] = key + "\n" + string(b)
	return sess.Save(c.Request(), c.Response())
}

// takeReveal returns (and forgets) what stashReveal kept for key: false when
// nothing is waiting for this page.
func (s *Server) takeReveal(c echo.Context, key string, v any) (bool, error) {
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
