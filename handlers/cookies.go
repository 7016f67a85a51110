package handlers

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/osfoundry/osfoundry/store"
)

const (
	cookieName  = "osf_session"
	keyOwnerID  = "owner_id"
	keyCSRF     = "csrf"
	csrfField   = "_csrf"
	csrfHeader  = "X-CSRF-Token"
	ctxSession  = "cookie_session"
	ctxOwner    = "owner"
	ctxCSRFFail = "csrf_failed"
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

// csrfToken returns the session's CSRF token ("" outside web routes).
func csrfToken(c echo.Context) string {
	if sess := cookieSession(c); sess != nil {
		t, _ := sess.Values[keyCSRF].(string)
		return t
	}
	return ""
}

// checkCSRF refuses state-changing requests whose token (form field _csrf or
// header X-CSRF-Token, as htmx sends it) does not match the session's.
func (s *Server) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		want := csrfToken(c)
		got := c.Request().Header.Get(csrfHeader)
		if got == "" {
			got = c.FormValue(csrfField)
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return echo.NewHTTPError(http.StatusForbidden, "This form has expired or did not come from this site. Reload the page and try again.")
		}
		return next(c)
	}
}

// requireOwner sends signed-out visitors to sign in (or to first-run setup
// on a fresh install), then back to where they were going.
func (s *Server) requireOwner(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if currentOwner(c) != nil {
			return next(c)
		}
		has, err := s.store.HasOwner(c.Request().Context())
		if err != nil {
			return err
		}
		if !has {
			return redirect(c, "/setup")
		}
		target := "/login"
		if c.Request().Method == http.MethodGet {
			target += "?next=" + url.QueryEscape(c.Request().URL.RequestURI())
		}
		return redirect(c, target)
	}
}

// signIn rotates the session to a new CSRF token and records the owner.
func (s *Server) signIn(c echo.Context, o *store.Owner) error {
	sess := cookieSession(c)
	sess.Values[keyOwnerID] = o.ID
	sess.Values[keyCSRF] = randomToken()
	c.Set(ctxOwner, o)
	c.Set("page", nil)
	return sess.Save(c.Request(), c.Response())
}

// signOut forgets the owner and the CSRF token.
func (s *Server) signOut(c echo.Context) error {
	sess := cookieSession(c)
	delete(sess.Values, keyOwnerID)
	sess.Values[keyCSRF] = randomToken()
	sess.Options.MaxAge = -1
	return sess.Save(c.Request(), c.Response())
}

// safeNext returns next when it is a local path, else "/": no open redirects.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}

// ownerCacheTTL is how long a signed-in owner is reused without a query. An
// owner's row changes rarely (a display name); a 5 s poll then costs nothing.
const ownerCacheTTL = 30 * time.Second

// ownerCache remembers owners loaded for signed-in requests, briefly.
type ownerCache struct {
	mu sync.Mutex
	m  map[int64]cachedOwner
}

type cachedOwner struct {
	owner *store.Owner
	at    time.Time
}

// get returns the owner from the cache when fresh, else from the store.
func (oc *ownerCache) get(ctx context.Context, st *store.Store, id int64) (*store.Owner, error) {
	oc.mu.Lock()
	e, ok := oc.m[id]
	oc.mu.Unlock()
	if ok && time.Since(e.at) < ownerCacheTTL {
		return e.owner, nil
	}
	o, err := st.OwnerByID(ctx, id)
	if err != nil {
		return nil, err
	}
	oc.mu.Lock()
	if oc.m == nil || len(oc.m) > 10000 {
		oc.m = map[int64]cachedOwner{}
	}
	oc.m[id] = cachedOwner{owner: o, at: time.Now()}
	oc.mu.Unlock()
	return o, nil
}
