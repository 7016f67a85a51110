package webhook

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

// verdict is what one attempt's answer means.
type verdict struct {
	delivered bool
	// retry: worth another attempt (network error, timeout, 408, 429, 5xx).
	retry bool
	code  int
	msg   string
	// retryAfter is the receiver's Retry-After, when it sent one.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// judge reads an attempt: 2xx delivered; network errors, timeouts, 408, 429 and
// 5xx retried; anything else failed at once, since a resend cannot change it.
func judge(res *http.Response, err error, at time.Time) verdict {
	if err != nil {
		v := verdict{retry: true, msg: attemptError(err)}
		if errors.Is(err, outbound.ErrNotPublic) || errors.Is(err, outbound.ErrNotUnicast) {
			v.retry = false
		}
		return v
	}
	v := verdict{code: res.StatusCode}
	switch c := res.StatusCode; {
	case c >= 200 && c < 300:
		v.delivered = true
		return v
	case c >= 300 && c < 400:
		v.msg = fmt.Sprintf("HTTP %d: redirects are not followed; use the final URL", c)
		if loc := res.Header.Get("Location"); loc != "" {
			v.msg += " (Location: " + printable(loc, 150) + ")"
		}
		return v
	case c == http.StatusTooManyRequests || c == http.StatusRequestTimeout || c >= 500:
		v.retry = true
		v.retryAfter, v.hasRetryAfter = parseRetryAfter(res.Header.Get("Retry-After"), at)
	}
	v.msg = fmt.Sprintf("HTTP %d", res.StatusCode)
	if snippet, _ := io.ReadAll(io.LimitReader(res.Body, 200)); len(snippet) > 0 {
		if s := printable(string(snippet), 150); s != "" {
			v.msg += ": " + s
		}
	}
	return v
}

// attemptError words a failed request without the "Post <url>:" prefix.
func attemptError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return "no answer within the timeout"
		}
		err = ue.Err
	}
	return printable(err.Error(), 250)
}

// printable keeps n showable characters of s: valid UTF-8, controls as spaces.
func printable(s string, n int) string {
	s = strings.ToValidUTF8(s, "�")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return strings.TrimSpace(s)
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second)+1)) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Bounds of an honoured Retry-After, within the retry window.
const (
	minRetryAfter = time.Second
	maxRetryAfter = 6 * time.Hour
)

// Retry timing.
type retryPolicy struct {
	// minBackoff doubles up to maxBackoff, each wait jittered between half and all.
	minBackoff, maxBackoff time.Duration
	// window: a delivery still failing this long after it was queued fails.
	window time.Duration
}

// backoff is the wait after failed attempt number attempt (1-based).
func (p retryPolicy) backoff(attempt int) time.Duration {
	d := p.minBackoff
	for i := 1; i < attempt && d < p.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// next turns a verdict into the outbox's record; age is since the delivery was queued.
func (p retryPolicy) next(v verdict, attempt int, age time.Duration) store.WebhookAttempt {
	a := store.WebhookAttempt{ResponseCode: v.code, Error: v.msg}
	switch {
	case v.delivered:
		a.State = store.DeliveryDelivered
		return a
	case !v.retry:
		a.State = store.DeliveryFailed
		return a
	}
	wait := p.backoff(attempt)
	if v.hasRetryAfter {
		wait = min(max(v.retryAfter, minRetryAfter), maxRetryAfter)
	}
	if age+wait > p.window {
		a.State = store.DeliveryFailed
		a.Error = fmt.Sprintf("gave up after %d attempts over %s: %s", attempt, roundAge(age), v.msg)
		return a
	}
	a.State, a.RetryIn = store.DeliveryPending, wait
	return a
}

func roundAge(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Minute)
	}
	return d.Round(100 * time.Millisecond)
}
