package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// The cookie session (gorilla/sessions, signed and encrypted) holds the
// CSRF token and, once signed in, the token of a sign-in the store holds
// (store.SignIn): the cookie proves nothing by itself, and a copy of it is
// worth nothing once that sign-in has ended.
const (
	cookieName = "osf_session"
	// keySignIn is the sign-in's token (the store keeps only its hash).
	keySignIn  = "sign_in"
	ctxSession = "cookie_session"
	ctxOwner   = "owner"
	ctxSignIn  = "sign_in"
)

// loadSession reads the cookie session, makes sure it has a CSRF token,
// and loads the sign-in it names (when it has not ended) and its owner into
// the context.
func (s *Server) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, err := s.cookies.Get(c.Request(), cookieName)
		if err != nil {
			// A tampered or stale cookie: start over with an empty session.
			sess, _ = s.cookies.New(c.Request(), cookieName)
		}
		c.Set(ctxSession, sess)
		save := false
		if _, ok := sess.Values[keyCSRF].(string); !ok {
			sess.Values[keyCSRF] = randomToken()
			save = true
		}
		if token, ok := sess.Values[keySignIn].(string); ok {
			found, err := s.loadSignIn(c, token)
			if err != nil {
				return err
			}
			if !found {
				delete(sess.Values, keySignIn)
				save = true
			}
		}
		if save {
			if err := sess.Save(c.Request(), c.Response()); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// loadSignIn puts the sign-in of token and its owner in the context; false
// when it has ended (or its owner is gone).
func (s *Server) loadSignIn(c echo.Context, token string) (bool, error) {
	ctx := c.Request().Context()
	si, err := s.signIns.get(ctx, s.store, token)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	o, err := s.owners.get(ctx, s.store, si.OwnerID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.Set(ctxSignIn, si)
	c.Set(ctxOwner, o)
	return true, nil
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

// currentSignIn returns the sign-in of the request, or nil.
func currentSignIn(c echo.Context) *store.SignIn {
	si, _ := c.Get(ctxSignIn).(*store.SignIn)
	return si
}

// signIn records a new sign-in of the owner from this browser (ending the
// one it had, if any) and rotates the cookie session to its token and a new
// CSRF token.
func (s *Server) signIn(c echo.Context, o *store.Owner) error {
	ctx := c.Request().Context()
	if err := s.endSignIn(ctx, currentOwner(c), currentSignIn(c)); err != nil {
		return err
	}
	token, si, err := s.store.CreateSignIn(ctx, o, c.RealIP(), c.Request().UserAgent())
	if err != nil {
		return err
	}
	sess := cookieSession(c)
	clear(sess.Values)
	sess.Values[keySignIn] = token
	sess.Values[keyCSRF] = randomToken()
	c.Set(ctxOwner, o)
	c.Set(ctxSignIn, si)
	c.Set("page", nil)
	return sess.Save(c.Request(), c.Response())
}

// signOut ends the request's sign-in, on every replica (its live streams
// close), and forgets the cookie session.
func (s *Server) signOut(c echo.Context) error {
	if err := s.endSignIn(c.Request().Context(), currentOwner(c), currentSignIn(c)); err != nil {
		return err
	}
	sess := cookieSession(c)
	clear(sess.Values)
	sess.Values[keyCSRF] = randomToken()
	sess.Options.MaxAge = -1
	return sess.Save(c.Request(), c.Response())
}

// endSignIn ends one of the owner's sign-ins (nothing when si is nil); this
// replica forgets it at once, the others when they hear of it.
func (s *Server) endSignIn(ctx context.Context, o *store.Owner, si *store.SignIn) error {
	if o == nil || si == nil {
		return nil
	}
	err := s.store.EndSignIn(ctx, store.Actor{OwnerID: o.ID, WorkspaceID: o.WorkspaceID}, si.ID)
	s.signIns.forget(si.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
