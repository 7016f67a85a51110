package handlers

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/static"
	"github.com/osfoundry/osfoundry/store"
)

// postJSON posts a JSON body with the CSRF token in the header, as
// static/app.js does.
func (c *ownerClient) postJSON(path, body string) (*http.Response, string) {
	req, _ := http.NewRequest(http.MethodPost, c.app.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", c.csrf)
	req.Header.Set("User-Agent", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36")
	res := c.do(req)
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func subscriptionJSON(endpoint string) string {
	b64 := base64.RawURLEncoding
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{
		"p256dh": b64.EncodeToString(append([]byte{4}, make([]byte, 64)...)), "auth": b64.EncodeToString(make([]byte, 16))}})
	return string(b)
}

// Every page links the manifest; the manifest makes the app installable
// (standalone, opening on the inbox, icons at the installers' sizes); the
// worker's script is served at the root with the shell it caches; the CSP
// and the Host rule hold on all of them.
func TestInstallableApp(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(c *Config) { c.VAPIDPublicKey = "BKey" })
	app.owner("olive@example.com", "")
	anon := app.client()
	res, body := anon.get("/login")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `<link rel="manifest" href="/manifest.webmanifest">`) ||
		!strings.Contains(body, `name="theme-color"`) {
		t.Fatalf("the sign-in page does not link the manifest: %d", res.StatusCode)
	}
	res, body = anon.get("/manifest.webmanifest")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/manifest+json" {
		t.Fatalf("manifest: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var m struct {
		Name, ShortName, StartURL, Display, ThemeColor, BackgroundColor string
		Icons                                                           []struct{ Src, Sizes, Type, Purpose string }
	}
	dec := strings.NewReplacer("short_name", "shortname", "start_url", "starturl", "theme_color", "themecolor", "background_color", "backgroundcolor")
	if err := json.Unmarshal([]byte(dec.Replace(body)), &m); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]bool{}
	for _, i := range m.Icons {
		sizes[i.Sizes+" "+i.Purpose] = true
		if r, _ := anon.get(i.Src); r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "image/png" {
			t.Errorf("icon %s: %d %s", i.Src, r.StatusCode, r.Header.Get("Content-Type"))
		}
	}
	if m.Name != "osFoundry" || m.ShortName == "" || m.StartURL != "/inbox" || m.Display != "standalone" || m.ThemeColor == "" || m.BackgroundColor == "" ||
		!sizes["192x192 any"] || !sizes["512x512 any"] || !sizes["512x512 maskable"] {
		t.Errorf("manifest %+v", m)
	}
	res, body = anon.get("/sw.js")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") ||
		!strings.Contains(body, static.URL("app.css")) || !strings.Contains(body, `"/offline"`) || !strings.Contains(body, `addEventListener("push"`) {
		t.Fatalf("service worker: %d %q", res.StatusCode, truncate(body))
	}
	res, body = anon.get("/offline")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "You are offline") {
		t.Fatalf("offline page: %d", res.StatusCode)
	}
	for _, path := range []string{"/manifest.webmanifest", "/sw.js", "/offline"} {
		res, _ := anon.get(path)
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		req, _ := http.NewRequest(http.MethodGet, app.srv.URL+path, nil)
		req.Host = "evil.example"
		if res, _ := anon.do(req); res.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("%s with a foreign Host: %d, want 421", path, res.StatusCode)
		}
	}
}

// "Notify this device" sends the subscription; it is named from the user
// agent, listed with its last push, renamed and removed on Account, and
// another owner's devices stay out of reach. A subscription that is not one
// is refused naming the field.
func TestAccountDevices(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(c *Config) { c.VAPIDPublicKey = "BPublicKeyOfTheServer" })
	olive := app.owner("olive@example.com", "")
	doc := olive.doc(olive.get("/account"), http.StatusOK)
	if doc.Find(`[data-testid="device-none"]`).Length() != 1 || doc.Find(`[data-push-subscribe="BPublicKeyOfTheServer"]`).Length() != 1 {
		t.Fatal("the account page has no empty device list or no subscribe box with the key")
	}
	if doc.Find(`[data-testid="push-questions"][checked]`).Length() != 1 || doc.Find(`[data-testid="push-replies"][checked]`).Length() != 0 {
		t.Error("defaults: questions on, replies off")
	}
	for body, field := range map[string]string{
		`nope`: "body",
		subscriptionJSON("ftp://push.example.com/1"):                                                                         "endpoint",
		`{"endpoint":"https://push.example.com/1","keys":{"p256dh":"AAAA","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}`:                 "keys.p256dh",
		strings.Replace(subscriptionJSON("https://push.example.com/1"), `"auth":"AAAAAAAAAAAAAAAAAAAAAA"`, `"auth":"AA"`, 1): "keys.auth",
	} {
		res, out := olive.postJSON("/account/devices", body)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(out, `"field":"`+field+`"`) {
			t.Errorf("%s: %d %s, want 422 naming %s", body, res.StatusCode, out, field)
		}
	}
	res, out := olive.postJSON("/account/devices", subscriptionJSON("https://push.example.com/olive"))
	if res.StatusCode != http.StatusCreated || !strings.Contains(out, `"name":"Chrome on Android"`) {
		t.Fatalf("subscribe: %d %s", res.StatusCode, out)
	}
	// Without the token: refused.
	req, _ := http.NewRequest(http.MethodPost, app.srv.URL+"/account/devices", strings.NewReader(subscriptionJSON("https://push.example.com/x")))
	req.Header.Set("Content-Type", "application/json")
	if res := olive.do(req); res.StatusCode != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", res.StatusCode)
	}
	subs, err := app.store.PushSubscriptions(t.Context(), olive.owner.ID)
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions %+v %v", subs, err)
	}
	id := subs[0].ID
	doc = olive.doc(olive.get("/account"), http.StatusOK)
	if v := doc.Find(`[data-testid="device-name"]`).AttrOr("value", ""); v != "Chrome on Android" {
		t.Errorf("device name %q", v)
	}
	if doc.Find(`[data-testid="device-last-push"]`).Text() != "No push yet" {
		t.Errorf("last push %q", doc.Find(`[data-testid="device-last-push"]`).Text())
	}

	oscar := app.owner("oscar@example.com", "Oscar's")
	if res := oscar.post(fmt.Sprintf("/account/devices/%d/rename", id), url.Values{"name": {"Mine"}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("another owner renames: %d", res.StatusCode)
	}
	if res := oscar.post(fmt.Sprintf("/account/devices/%d/remove", id), nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("another owner removes: %d", res.StatusCode)
	}
	if doc := oscar.doc(oscar.get("/account"), http.StatusOK); doc.Find(`[data-testid="device"]`).Length() != 0 {
		t.Error("another owner lists the device")
	}

	if res := olive.post(fmt.Sprintf("/account/devices/%d/rename", id), url.Values{"name": {""}}); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a blank name: %d", res.StatusCode)
	}
	if res := olive.post(fmt.Sprintf("/account/devices/%d/rename", id), url.Values{"name": {"Olive's phone"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: %d", res.StatusCode)
	}
	if res := olive.post("/account/push", url.Values{"replies": {"on"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d", res.StatusCode)
	}
	if p, _ := app.store.PushSettingsOf(t.Context(), olive.owner.ID); p != (store.PushSettings{Replies: true}) {
		t.Errorf("settings %+v", p)
	}
	doc = olive.doc(olive.get("/account?done=device-renamed"), http.StatusOK)
	if v := doc.Find(`[data-testid="device-name"]`).AttrOr("value", ""); v != "Olive's phone" {
		t.Errorf("renamed to %q", v)
	}
	if res := olive.post(fmt.Sprintf("/account/devices/%d/remove", id), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d", res.StatusCode)
	}
	if subs, _ := app.store.PushSubscriptions(t.Context(), olive.owner.ID); len(subs) != 0 {
		t.Errorf("still subscribed: %+v", subs)
	}
}

// The service worker answers with the sign-in's CSRF token, which it reads
// from /push/csrf, and gets the outcome as JSON: the first answer wins, a
// later one is refused naming who answered.
func TestAnswerFromNotification(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	ag := f.invitedAgent("ask-bot", "Ask Bot")
	q, _, err := f.app.store.AskQuestion(t.Context(), store.AgentQuestion{WorkspaceID: f.alice.owner.WorkspaceID, ConnectionID: ag.connID,
		SessionType: f.session.Type, SessionID: f.session.PublicID, Text: "Ship?", Options: []string{"Yes", "No"}, IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	res := f.alice.get("/push/csrf")
	var tok struct{ CSRF string }
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || res.StatusCode != http.StatusOK || tok.CSRF != f.alice.csrf {
		t.Fatalf("csrf: %d %+v %v", res.StatusCode, tok, err)
	}
	if res, _ := f.app.client().get("/push/csrf"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("signed out: %d, want a redirect to sign in", res.StatusCode)
	}
	answer := func(c *ownerClient, option string) (int, map[string]string) {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/sessions/%d/questions/%d/answer", f.app.srv.URL, f.session.ID, q.ID),
			strings.NewReader("option="+option))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-CSRF-Token", c.csrf)
		req.Header.Set("Accept", "application/json")
		res := c.do(req)
		out := map[string]string{}
		json.NewDecoder(res.Body).Decode(&out) //nolint:errcheck
		return res.StatusCode, out
	}
	if status, out := answer(f.alice, "1"); status != http.StatusOK || out["answer"] != "No" || out["state"] != store.QuestionAnswered {
		t.Fatalf("answer: %d %+v", status, out)
	}
	other := f.app.signInAgain(f.alice, "", "Another browser")
	if status, out := answer(other, "0"); status != http.StatusConflict || !strings.Contains(out["notice"], "answered this question already: No") {
		t.Fatalf("second answer: %d %+v", status, out)
	}
}

// Allow and Deny from an approval's notification: the service worker posts
// the verdict with the sign-in's CSRF token and gets the outcome as JSON;
// the first decision wins, a later one is refused naming who decided.
func TestDecideFromNotification(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	f.app.agentNote(f.ag, f.session.ID, "Working", "On it.")
	code, out := f.app.agentRequest(f.ag, http.MethodPost, "/agent/approvals", `{"tool":"Bash","summary":"npm publish"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, out)
	}
	id := int64(out["id"].(float64))
	decide := func(c *ownerClient, verdict string) (int, map[string]string) {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/approvals/%d/decide", f.app.srv.URL, id), strings.NewReader("verdict="+verdict))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-CSRF-Token", c.csrf)
		req.Header.Set("Accept", "application/json")
		res := c.do(req)
		out := map[string]string{}
		json.NewDecoder(res.Body).Decode(&out) //nolint:errcheck
		return res.StatusCode, out
	}
	if status, out := decide(f.alice, "deny"); status != http.StatusOK || out["state"] != store.ApprovalDenied ||
		out["decided_by"] != f.alice.owner.DisplayName || out["notice"] != "" {
		t.Fatalf("decide: %d %+v", status, out)
	}
	other := f.app.signInAgain(f.alice, "", "Another browser")
	if status, out := decide(other, "allow"); status != http.StatusConflict || out["state"] != store.ApprovalDenied ||
		out["notice"] != f.alice.owner.DisplayName+" denied this already" {
		t.Fatalf("second decision: %d %+v", status, out)
	}
}
