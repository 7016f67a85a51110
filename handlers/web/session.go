// Package web is the plumbing of the owner web app: the cookie session and
// its sign-in, CSRF, rendering, errors, forms, parameters, throttles and
// server-sent events. Nothing in it knows a particular page.
package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

// The cookie session holds the CSRF token and a sign-in's token: a copy of the
// cookie is worth nothing once that sign-in has ended.
const (
	// CookieName is the cookie session's name.
	CookieName = "osf_session"
	keySignIn  = "sign_in"
	ctxSession = "cookie_session"
	ctxOwner   = "owner"
	ctxSignIn  = "sign_in"
	ctxPage    = "page"
)

// Sessions loads and rotates cookie sessions and their sign-ins, cached briefly.
type Sessions struct {
	cookies *sessions.CookieStore
	store   *store.Store
	signIns signInCache
	owners  ownerCache
}

// NewSessions builds the cookie store; l makes the caches forget on every replica.
func NewSessions(st *store.Store, hashKey, blockKey []byte, secure bool, l *store.Listener) *Sessions {
	cs := sessions.NewCookieStore(hashKey, blockKey)
	cs.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   int(store.SignInLifetime.Seconds()),
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	// The cookie outlives no sign-in (the store ends sign-ins earlier still).
	cs.MaxAge(int(store.SignInLifetime.Seconds()))
	s := &Sessions{cookies: cs, store: st}
	s.signIns.hear(l)
	s.owners.hear(l)
	return s
}

// Load reads the cookie session, gives it a CSRF token, and puts its live
// sign-in and owner in the context.
func (s *Sessions) Load(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, err := s.cookies.Get(c.Request(), CookieName)
		if err != nil {
			// A tampered or stale cookie: start over with an empty session.
			sess, _ = s.cookies.New(c.Request(), CookieName)
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

// loadSignIn puts token's sign-in and owner in the context; false when ended.
func (s *Sessions) loadSignIn(c echo.Context, token string) (bool, error) {
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

// Owner returns the signed-in owner, or nil.
func Owner(c echo.Context) *store.Owner {
	o, _ := c.Get(ctxOwner).(*store.Owner)
	return o
}

// SignIn returns the sign-in of the request, or nil.
func SignIn(c echo.Context) *store.SignIn {
	si, _ := c.Get(ctxSignIn).(*store.SignIn)
	return si
}

// Actor is the signed-in person as the store's actions take them.
func Actor(c echo.Context) store.Actor {
	o := Owner(c)
	return store.Actor{OwnerID: o.ID, WorkspaceID: o.WorkspaceID, RemoteAddr: c.RealIP(), UserAgent: c.Request().UserAgent()}
}

// SignIn records a new sign-in of o, ending this browser's, with a new CSRF token.
func (s *Sessions) SignIn(c echo.Context, o *store.Owner) error {
	ctx := c.Request().Context()
	if err := s.endSignIn(ctx, Owner(c), SignIn(c)); err != nil {
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
	c.Set(ctxPage, nil)
	return sess.Save(c.Request(), c.Response())
}

// SignOut ends the sign-in on every replica and forgets the cookie session.
func (s *Sessions) SignOut(c echo.Context) error {
	if err := s.endSignIn(c.Request().Context(), Owner(c), SignIn(c)); err != nil {
		return err
	}
	sess := cookieSession(c)
	clear(sess.Values)
	sess.Values[keyCSRF] = randomToken()
	sess.Options.MaxAge = -1
	return sess.Save(c.Request(), c.Response())
}

// endSignIn ends si (nothing when nil); this replica forgets it at once.
func (s *Sessions) endSignIn(ctx context.Context, o *store.Owner, si *store.SignIn) error {
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

// ForgetSignIn drops an ended sign-in from this replica's cache at once.
func (s *Sessions) ForgetSignIn(id int64) { s.signIns.forget(id) }

// ForgetOtherSignIns drops every cached sign-in of the owner but keep.
func (s *Sessions) ForgetOtherSignIns(ownerID, keep int64) { s.signIns.forgetOthers(ownerID, keep) }

// ForgetOwner drops a cached person whose row just changed.
func (s *Sessions) ForgetOwner(id int64) { s.owners.forget(id) }
