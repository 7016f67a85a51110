package web

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// PageLimiter is a token bucket per sign-in, on each replica, for the pages
// that read the most (search and the inbox).
type PageLimiter struct {
	perMinute, burst int
	mu               sync.Mutex
	buckets          map[int64]*pageBucket
}

type pageBucket struct {
	tokens float64
	at     time.Time
}

// NewPageLimiter refills perMinute tokens a minute, at most burst held.
func NewPageLimiter(perMinute, burst int) *PageLimiter {
	return &PageLimiter{perMinute: perMinute, burst: burst, buckets: map[int64]*pageBucket{}}
}

// take takes a token, or says how long until there is one.
func (p *PageLimiter) take(signInID int64, now time.Time) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rate := float64(p.perMinute) / 60 // tokens a second
	b := p.buckets[signInID]
	if b == nil {
		if len(p.buckets) >= 10000 {
			p.forgetFull(now, rate)
		}
		b = &pageBucket{tokens: float64(p.burst), at: now}
		p.buckets[signInID] = b
	}
	b.tokens = math.Min(float64(p.burst), b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / rate * float64(time.Second)), false
	}
	b.tokens--
	return 0, true
}

// forgetFull drops the buckets that have refilled.
func (p *PageLimiter) forgetFull(now time.Time, rate float64) {
	for id, b := range p.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*rate >= float64(p.burst) {
			delete(p.buckets, id)
		}
	}
}

// Limit answers 429 with Retry-After past the bucket, before next reads anything.
func (p *PageLimiter) Limit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		si := SignIn(c)
		if si == nil {
			return next(c)
		}
		wait, ok := p.take(si.ID, time.Now())
		if ok {
			return next(c)
		}
		seconds := max(int(math.Ceil(wait.Seconds())), 1)
		c.Response().Header().Set("Retry-After", strconv.Itoa(seconds))
		return echo.NewHTTPError(http.StatusTooManyRequests,
			"You are loading search and the inbox faster than this server allows. Try again in "+WaitWords(wait)+".")
	}
}
