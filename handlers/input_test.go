package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestBadTextAndBigBodiesAreRefused(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.client()
	token := c.csrf("/setup")
	for name, form := range map[string]url.Values{
		"email":        {"_csrf": {token}, "email": {"a\x00@example.com"}, "display_name": {"A"}, "password": {"long enough password"}},
		"display_name": {"_csrf": {token}, "email": {"a@example.com"}, "display_name": {"A\xff\xfe"}, "password": {"long enough password"}},
	} {
		res, body := c.post("/setup", form)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, name) {
			t.Errorf("%s: %d, body names field: %v", name, res.StatusCode, strings.Contains(body, name))
		}
	}
	if has, _ := app.store.HasOwner(context.Background()); has {
		t.Fatal("an owner was created from bad input")
	}
	big := url.Values{"_csrf": {token}, "email": {strings.Repeat("a", 2<<20)}}
	res, _ := c.post("/setup", big)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("2 MiB body: %d, want 413", res.StatusCode)
	}
}
