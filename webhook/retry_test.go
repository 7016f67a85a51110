package webhook

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/outbound"
	"github.com/osfoundry/osfoundry/store"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"99999999999999999", maxRetryAfter + time.Second, true},
		{"Fri, 01 May 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Fri, 01 May 2026 11:00:00 GMT", 0, true},
	} {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffDoublesWithJitterUpToTheCap(t *testing.T) {
	t.Parallel()
	p := retryPolicy{minBackoff: 5 * time.Second, maxBackoff: time.Hour, window: 24 * time.Hour}
	for attempt, base := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 5: 80 * time.Second, 11: time.Hour, 40: time.Hour} {
		for range 200 {
			if d := p.backoff(attempt); d < base/2 || d > base {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, d, base/2, base)
			}
		}
	}
	// Over 24 hours of 5xx answers, about thirty attempts are made.
	var age time.Duration
	attempts := 0
	for attempt := 1; ; attempt++ {
		a := p.next(verdict{retry: true, code: 503, msg: "HTTP 503"}, attempt, age)
		attempts = attempt
		if a.State == store.DeliveryFailed {
			if !strings.HasPrefix(a.Error, fmt.Sprintf("gave up after %d attempts over ", attempt)) || a.ResponseCode != 503 {
				t.Fatalf("give-up %+v", a)
			}
			break
		}
		age += a.RetryIn
	}
	if attempts < 25 || attempts > 45 || age > 24*time.Hour {
		t.Fatalf("%d attempts over %v", attempts, age)
	}
	t.Logf("a delivery that keeps failing is tried %d times over %v", attempts, age.Round(time.Minute))
}

func TestRetryAfterWinsOverBackoffWithinBounds(t *testing.T) {
	t.Parallel()
	p := retryPolicy{minBackoff: 5 * time.Second, maxBackoff: time.Hour, window: 24 * time.Hour}
	for _, tc := range []struct {
		after, want time.Duration
	}{
		{30 * time.Second, 30 * time.Second},
		{0, minRetryAfter},
		{48 * time.Hour, maxRetryAfter},
	} {
		a := p.next(verdict{retry: true, code: 429, retryAfter: tc.after, hasRetryAfter: true}, 7, time.Minute)
		if a.State != store.DeliveryPending || a.RetryIn != tc.want {
			t.Errorf("Retry-After %v: %+v, want a wait of %v", tc.after, a, tc.want)
		}
	}
	if a := p.next(verdict{retry: true, code: 429, retryAfter: 2 * time.Hour, hasRetryAfter: true}, 2, 23*time.Hour); a.State != store.DeliveryFailed {
		t.Errorf("a Retry-After past the window: %+v", a)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	at := time.Now()
	res := func(code int, h http.Header, body string) *http.Response {
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body))}
	}
	refused := &url.Error{Op: "Post", URL: "http://10.0.0.1/x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("dial 10.0.0.1:80: %w", outbound.ErrNotPublic)}}
	for _, tc := range []struct {
		name         string
		res          *http.Response
		err          error
		delivered    bool
		retry        bool
		msgHas       string
		retryAfterOK bool
	}{
		{"200", res(200, nil, ""), nil, true, false, "", false},
		{"204", res(204, nil, ""), nil, true, false, "", false},
		{"301", res(301, http.Header{"Location": {"https://new.example.com/hook"}}, ""), nil, false, false, "Location: https://new.example.com/hook", false},
		{"400", res(400, nil, "bad payload\x00"), nil, false, false, "HTTP 400: bad payload", false},
		{"404", res(404, nil, ""), nil, false, false, "HTTP 404", false},
		{"408", res(408, nil, ""), nil, false, true, "HTTP 408", false},
		{"429", res(429, http.Header{"Retry-After": {"7"}}, ""), nil, false, true, "HTTP 429", true},
		{"500", res(500, nil, "oops"), nil, false, true, "HTTP 500: oops", false},
		{"503 Retry-After", res(503, http.Header{"Retry-After": {"3"}}, ""), nil, false, true, "HTTP 503", true},
		{"network", nil, &url.Error{Op: "Post", URL: "http://x", Err: errors.New("connection refused")}, false, true, "connection refused", false},
		{"not public", nil, refused, false, false, "not a public internet address", false},
	} {
		v := judge(tc.res, tc.err, at)
		if v.delivered != tc.delivered || v.retry != tc.retry || !strings.Contains(v.msg, tc.msgHas) || v.hasRetryAfter != tc.retryAfterOK {
			t.Errorf("%s: %+v", tc.name, v)
		}
		if strings.Contains(v.msg, "Post ") {
			t.Errorf("%s: message keeps the request prefix: %q", tc.name, v.msg)
		}
	}
}

func TestSlackEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a < b && c > d":          "a &lt; b &amp;&amp; c &gt; d",
		"<!channel> <!here>":      "&lt;!channel&gt; &lt;!here&gt;",
		"hi @channel and @Here":   "hi @\u200bchannel and @\u200bHere",
		"@everyone @all @alice":   "@\u200beveryone @\u200ball @\u200balice",
		"mail me at a@allied.org": "mail me at a@allied.org",
		"<https://evil|click>":    "&lt;https://evil|click&gt;",
		// Every @word: users and Mattermost groups too, at a word's start
		// (after punctuation as well); not inside a word.
		"ask @alice or @dev-team":    "ask @\u200balice or @\u200bdev-team",
		"(@channel), x.@here, @@all": "(@\u200bchannel), x.@\u200bhere, @\u200b@\u200ball",
		"alice_b@example.org @ noon": "alice_b@example.org @ noon",
		"@Everyone\n@here":           "@\u200bEveryone\n@\u200bhere",
		// Markdown links and images: the ] no longer meets its ( [ or :.
		"[Open the session](https://evil.example/phish)":     "[Open the session]\u200b(https://evil.example/phish)",
		"![pixel](https://t.example/p.gif)":                  "![pixel]\u200b(https://t.example/p.gif)",
		"[click][1]\n[1]: https://evil.example":              "[click]\u200b[1]\n[1]\u200b: https://evil.example",
		"[![x](https://i.example/a.png)](https://e.example)": "[![x]\u200b(https://i.example/a.png)]\u200b(https://e.example)",
		"a list [1, 2] (and more)":                           "a list [1, 2] (and more)",
	} {
		if got := slackEscape(in); got != want {
			t.Errorf("slackEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
