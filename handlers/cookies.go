package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"errors"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

const (
	cookieName = "osf_session"
	keyOwnerID = "owner_id"
	// keySignIn is a random id of one signed-in cookie session: signing
	// out publishes it, so that every replica ends that sign-in's streams.
	keySignIn  = "sign_in"
	ctxSession = "cookie_session"
	ctxOwner   = "owner"
)

// loadSession reads the signed cookie session, makes sure it has a CSRF
// token, and loads the signed-in owner (if any) into the context.
func (s *Server) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, err := s.cookies.Get(c.Request(), cookieName)
		if err != nil {
			// A tampered or stale cookie: start over with an empty session.
			sess, _ = s.cookies.New(c.Request(), cookieName)
		}
		c.Set(ctxSession, sess)
		if _, ok := sess.Values[keyCSRF].(string); !ok {
			sess.Values[keyCSRF] = randomToken()
			if err := sess.Save(c.Request(), c.Response()); err != nil {
				return err
			}
		}
		if id, ok := sess.Values[keyOwnerID].(int64); ok {
			o, err := s.owners.get(c.Request().Context(), s.store, id)
			switch {
			case err == nil:
				c.Set(ctxOwner, o)
			case errors.Is(err, store.ErrNotFound):
				delete(sess.Values, keyOwnerID)
				_ = sess.Save(c.Request(), c.Response())
			default:
				return err
			}
		}
		return next(c)
	}
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func cookieSession(c echo.Context) *sessions.Session {
	sess, _ := c.Get(ctxSession).(*sessions.Session)
	return sess
}

// currentOwner returns the signed-in owner, or nil.
func currentOwner(c echo.Context) *store.Owner {
	o, _ := c.Get(ctxOwner).(*store.Owner)
	return o
}

// signInID returns the sign-in id of the signed-in cookie session, giving
// one to a session signed in before sign-in ids existed.
func signInID(c echo.Context) (string, error) {
	sess := cookieSession(c)
	if id, ok := sess.Values[keySignIn].(string); ok && id != "" {
		return id, nil
	}
	id := randomToken()
	sess.Values[keySignIn] = id
	return id, sess.Save(c.Request(), c.Response())
}

// signIn rotates the session to a new CSRF token and sign-in id, and
// records the owner.
func (s *Server) signIn(c echo.Context, o *store.Owner) error {
	sess := cookieSession(c)
	sess.Values[keyOwnerID] = o.ID
	sess.Values[keyCSRF] = randomToken()
	sess.Values[keySignIn] = randomToken()
	c.Set(ctxOwner, o)
	c.Set("page", nil)
	return sess.Save(c.Request(), c.Response())
}

// signOut forgets the owner and the CSRF token, and tells every replica to
// end the live streams of this sign-in.
func (s *Server) signOut(c echo.Context) error {
	sess := cookieSession(c)
	id, _ := sess.Values[keySignIn].(string)
	delete(sess.Values, keyOwnerID)
	delete(sess.Values, keySignIn)
	sess.Values[keyCSRF] = randomToken()
	sess.Options.MaxAge = -1
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	if id != "" {
		s.store.NotifySignOut(id)
	}
	return nil
}
