package handlers

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// PageLimits bound how often one sign-in may load the owner pages that read
// the most (search and the inbox): a token bucket per sign-in on each
// replica, PerMinute tokens a minute, at most Burst held. Past it the page
// answers 429 with Retry-After.
type PageLimits struct {
	PerMinute int
	Burst     int
}

// DefaultPageLimits: 60 a minute, bursts of 20; an owner reading and
// searching by hand never meets them.
var DefaultPageLimits = PageLimits{PerMinute: 60, Burst: 20}

// pageLimiter holds the buckets of the sign-ins that loaded a limited page.
type pageLimiter struct {
	limits  PageLimits
	mu      sync.Mutex
	buckets map[int64]*pageBucket
}

type pageBucket struct {
	tokens float64
	at     time.Time
}

func newPageLimiter(l PageLimits) *pageLimiter {
	if l.PerMinute <= 0 || l.Burst <= 0 {
		l = DefaultPageLimits
	}
	return &pageLimiter{limits: l, buckets: map[int64]*pageBucket{}}
}

// take takes a token of the sign-in's bucket, or says how long until one is
// there.
func (p *pageLimiter) take(signInID int64, now time.Time) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rate := float64(p.limits.PerMinute) / 60 // tokens a second
	b := p.buckets[signInID]
	if b == nil {
		if len(p.buckets) >= 10000 {
			p.forgetFull(now, rate)
		}
		b = &pageBucket{tokens: float64(p.limits.Burst), at: now}
		p.buckets[signInID] = b
	}
	b.tokens = math.Min(float64(p.limits.Burst), b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / rate * float64(time.Second)), false
	}
	b.tokens--
	return 0, true
}

// forgetFull drops the buckets that have refilled: they hold nothing a new
// one would not.
func (p *pageLimiter) forgetFull(now time.Time, rate float64) {
	for id, b := range p.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*rate >= float64(p.limits.Burst) {
			delete(p.buckets, id)
		}
	}
}

// limitPage answers 429 with Retry-After to a sign-in past its bucket of
// limited pages (PageLimits), before next reads anything.
func (s *Server) limitPage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		si := currentSignIn(c)
		if si == nil {
			return next(c)
		}
		wait, ok := s.pages.take(si.ID, time.Now())
		if ok {
			return next(c)
		}
		seconds := max(int(math.Ceil(wait.Seconds())), 1)
		c.Response().Header().Set("Retry-After", strconv.Itoa(seconds))
		return echo.NewHTTPError(http.StatusTooManyRequests,
			"You are loading search and the inbox faster than this server allows. Try again in "+waitWords(wait)+".")
	}
}
