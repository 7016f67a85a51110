package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/store"
)

func TestLoginRefusesOpenRedirects(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	if _, err := app.store.CreateOwner(context.Background(), store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"} {
		c := app.client()
		token := c.csrf("/login")
		res, _ := c.post("/login", url.Values{"_csrf": {token}, "email": {"a@example.com"}, "password": {"long enough password"}, "next": {next}})
		if res.Header.Get("Location") != "/" {
			t.Errorf("next=%q redirected to %q, want /", next, res.Header.Get("Location"))
		}
	}
}

// TestSignInThrottleHoldsUnderConcurrency: 40 wrong passwords at once for
// one email from one address: only the free tries are checked (hashed), the
// rest refused with 429 and Retry-After before any hash. The owner's right
// password from another address still signs in.
func TestSignInThrottleHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	app.owner("alice@example.com", "")
	c := app.client()
	tok := c.csrf("/login")
	hashed := app.store.Hashes().Counts().Run
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, app.srv.URL+"/login", strings.NewReader(url.Values{"_csrf": {tok},
				"email": {"alice@example.com"}, "password": {"wrong password"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := c.http.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			mu.Lock()
			statuses[res.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	// The free tries go ahead, one hash at a time (the gate): one that
	// waits too long behind the others is answered 503, unchecked.
	checked := statuses[http.StatusUnauthorized]
	if checked+statuses[http.StatusServiceUnavailable] != web.SignInFreeTries || statuses[http.StatusTooManyRequests] != 40-web.SignInFreeTries {
		t.Fatalf("answers to 40 concurrent wrong passwords: %v, want %d allowed (401, or 503 when the gate was full), the rest 429", statuses, web.SignInFreeTries)
	}
	if n := app.store.Hashes().Counts().Run - hashed; n != uint64(checked) {
		t.Fatalf("%d passwords hashed, want %d", n, checked)
	}
	// From another address the owner signs in at once.
	elsewhere := app.clientFrom("127.0.0.2")
	res, _ := elsewhere.post("/login", url.Values{"_csrf": {elsewhere.csrf("/login")}, "email": {"alice@example.com"}, "password": {testPassword}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the owner from another address: %d, want signed in", res.StatusCode)
	}
}

// TestSignInSaysTriesLeftThenWaits: each wrong password says how many tries
// are left, the last free one how long to wait; then tries wait (429, even
// the right password from that address), and once the wait is over the
// right password signs in.
func TestSignInSaysTriesLeftThenWaits(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	app.owner("alice@example.com", "")
	c := app.client()
	tok := c.csrf("/login")
	try := func(password string) (*http.Response, string) {
		return c.post("/login", url.Values{"_csrf": {tok}, "email": {"Alice@example.com"}, "password": {password}})
	}
	for i := range web.SignInFreeTries - 1 {
		res, body := try("wrong password")
		want := []string{"4 tries left", "3 tries left", "2 tries left", "1 try left"}[i]
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "do not match") || !strings.Contains(body, want) {
			t.Fatalf("wrong password %d: %d, want %q in\n%s", i+1, res.StatusCode, want, truncate(body))
		}
	}
	res, body := try("wrong password")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wait 30 seconds before the next try") {
		t.Fatalf("the last free try: %d\n%s", res.StatusCode, truncate(body))
	}
	res, body = try(testPassword)
	if wait, _ := strconv.Atoi(res.Header.Get("Retry-After")); res.StatusCode != http.StatusTooManyRequests || wait < 20 || wait > 30 ||
		!strings.Contains(body, "Try again in "+strconv.Itoa(wait)+" seconds") {
		t.Fatalf("during the wait: %d Retry-After %q\n%s", res.StatusCode, res.Header.Get("Retry-After"), truncate(body))
	}
	app.sql().Exec(`UPDATE attempts SET next_at = now() - interval '1 second'`)
	if res, _ := try(testPassword); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the wait, the right password: %d", res.StatusCode)
	}
	// Signed in, the count starts over.
	var rows int
	app.sql().QueryRow(`SELECT count(*) FROM attempts WHERE email = 'alice@example.com'`).Scan(&rows)
	if rows != 0 {
		t.Fatal("the email's tries were kept after signing in")
	}
}

// TestPasswordHashesAreBounded: while every slot of the hash gate is taken,
// a sign-in waits store.HashWait, then gets 503 with Retry-After, unhashed;
// once a slot is free it goes through.
func TestPasswordHashesAreBounded(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	app.owner("alice@example.com", "")
	ctx := context.Background()
	gate := app.store.Hashes()
	var releases []func()
	for range gate.Size() {
		release, err := gate.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	c := app.clientFrom("127.0.0.3")
	tok := c.csrf("/login")
	before := gate.Counts()
	start := time.Now()
	res, body := c.post("/login", url.Values{"_csrf": {tok}, "email": {"alice@example.com"}, "password": {testPassword}})
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "busy") {
		t.Fatalf("with the gate full: %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if took := time.Since(start); took < store.HashWait {
		t.Fatalf("refused after %v, before the wait of %v", took, store.HashWait)
	}
	if got := gate.Counts(); got.Run != before.Run || got.Refused != before.Refused+1 {
		t.Fatalf("counts %+v after %+v, want one refused and none run", got, before)
	}
	for _, release := range releases {
		release()
	}
	if res, _ := c.post("/login", url.Values{"_csrf": {tok}, "email": {"alice@example.com"}, "password": {testPassword}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("with a free slot: %d", res.StatusCode)
	}
}
