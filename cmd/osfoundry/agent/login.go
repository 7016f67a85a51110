package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// scopes is what login asks for; the owner may narrow it on the consent page.
var scopes = []string{"osfoundry:read", "osfoundry:write"}

// serverMeta is what discovery learns: the protected resource (RFC 9728)
// and its authorization server (RFC 8414).
type serverMeta struct {
	Resource              string   `json:"-"`
	Scopes                []string `json:"-"`
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	RevocationEndpoint    string   `json:"revocation_endpoint"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
	// IssParameter: the server adds iss to its authorization responses
	// (RFC 9207), so a response without it is refused.
	IssParameter bool `json:"authorization_response_iss_parameter_supported"`
}

// wellKnown inserts a well-known suffix between an URL's origin and its path
// (RFC 8414 §3.1, RFC 9728 §3.1).
func wellKnown(raw, suffix string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("not an absolute URL: %q", raw)
	}
	return u.Scheme + "://" + u.Host + "/.well-known/" + suffix + strings.TrimRight(u.Path, "/"), nil
}

func getJSON(ctx context.Context, hc *http.Client, server, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	res, err := hc.Do(req)
	if err != nil {
		return &unreachableError{Server: server, Err: err}
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d (is %s an osFoundry server?)", u, res.StatusCode, server)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// discover finds the server's MCP resource and authorization server, and
// checks what they say before anything of it is used: the resource is the
// server's own (RFC 9728 §3.3), and every endpoint is an https URL on the
// issuer's origin (plain http only on loopback), so no other scheme ever
// reaches the browser and no other host the tokens.
func discover(ctx context.Context, hc *http.Client, server string) (*serverMeta, error) {
	resource := server + "/mcp"
	prmURL, err := wellKnown(resource, "oauth-protected-resource")
	if err != nil {
		return nil, err
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if err := getJSON(ctx, hc, server, prmURL, &prm); err != nil {
		return nil, err
	}
	if prm.Resource == "" || len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("%s names no resource or authorization server", prmURL)
	}
	if !sameResource(prm.Resource, resource) {
		return nil, fmt.Errorf("%s: its resource %q is not %s, the server asked about (RFC 9728 §3.3)", prmURL, prm.Resource, resource)
	}
	issuer := strings.TrimRight(prm.AuthorizationServers[0], "/")
	iu, err := checkEndpoint(issuer, "")
	if err != nil {
		return nil, fmt.Errorf("%s: authorization server %q %v", prmURL, prm.AuthorizationServers[0], err)
	}
	asURL, err := wellKnown(issuer, "oauth-authorization-server")
	if err != nil {
		return nil, err
	}
	var m serverMeta
	if err := getJSON(ctx, hc, server, asURL, &m); err != nil {
		return nil, err
	}
	switch {
	case strings.TrimRight(m.Issuer, "/") != issuer:
		return nil, fmt.Errorf("%s: issuer %q differs from %q", asURL, m.Issuer, issuer)
	case m.AuthorizationEndpoint == "" || m.TokenEndpoint == "":
		return nil, fmt.Errorf("%s: no authorization or token endpoint", asURL)
	case m.RegistrationEndpoint == "":
		return nil, fmt.Errorf("%s: the server offers no dynamic client registration", asURL)
	case !slices.Contains(m.CodeChallengeMethods, "S256"):
		return nil, fmt.Errorf("%s: the server does not offer PKCE with S256", asURL)
	}
	origin := iu.Scheme + "://" + iu.Host
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", m.AuthorizationEndpoint}, {"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint}, {"revocation_endpoint", m.RevocationEndpoint},
	} {
		if e.url == "" && e.name == "revocation_endpoint" {
			continue
		}
		if _, err := checkEndpoint(e.url, origin); err != nil {
			return nil, fmt.Errorf("%s: %s %q %v", asURL, e.name, e.url, err)
		}
	}
	m.Resource = prm.Resource
	m.Scopes = prm.ScopesSupported
	return &m, nil
}

// checkEndpoint parses an endpoint of the server's metadata: an absolute
// https URL (http only to a loopback host), without credentials or a
// fragment, on origin when that is given.
func checkEndpoint(raw, origin string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("is not a URL")
	case u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())):
		return nil, errors.New("must be an https URL (plain http only on this machine)")
	case u.Host == "":
		return nil, errors.New("is not an absolute URL")
	case u.User != nil || u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, errors.New("must not hold credentials or a fragment")
	case origin != "" && !strings.EqualFold(u.Scheme+"://"+u.Host, origin):
		return nil, fmt.Errorf("is not on the authorization server's origin %s", origin)
	}
	return u, nil
}

// sameResource reports whether a protected resource names the resource the
// metadata was asked for: the same scheme, host and path (a trailing slash
// aside).
func sameResource(got, want string) bool {
	g, err1 := url.Parse(got)
	w, err2 := url.Parse(want)
	return err1 == nil && err2 == nil && g.Scheme == w.Scheme && strings.EqualFold(g.Host, w.Host) &&
		strings.TrimRight(g.Path, "/") == strings.TrimRight(w.Path, "/") && g.RawQuery == "" && g.Fragment == "" && g.User == nil
}

// isLoopback reports whether a host name is this machine: localhost or a
// loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// register registers a public client for the loopback redirect (RFC 7591).
func register(ctx context.Context, hc *http.Client, server string, m *serverMeta, redirect, name string) (string, error) {
	body, _ := json.Marshal(map[string]any{
		"client_name":                name,
		"redirect_uris":              []string{redirect},
		"token_endpoint_auth_method": "none",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"scope":                      strings.Join(scopes, " "),
		"software_id":                "osfoundry-agent",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.RegistrationEndpoint, strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	res, err := hc.Do(req)
	if err != nil {
		return "", &unreachableError{Server: server, Err: err}
	}
	defer res.Body.Close()
	var out struct {
		ClientID         string `json:"client_id"`
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out)
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK || out.ClientID == "" {
		return "", fmt.Errorf("client registration refused (HTTP %d): %s %s", res.StatusCode, out.Error, out.ErrorDescription)
	}
	return out.ClientID, nil
}

// loginOptions configures login.
type loginOptions struct {
	dirs      folders
	Server    string // normalized
	Checkout  string
	NoBrowser bool
	Timeout   time.Duration
	// Handle and Name, when set, claim the agent profile right after sign-in.
	Handle, Name string
	// InsecureHTTP allows a plain http:// server that is not on this machine.
	InsecureHTTP bool
}

type callback struct {
	code string
	err  error
}

// login connects the checkout to the server with OAuth 2.1: discovery,
// dynamic registration (once per checkout: a later login reuses it), PKCE
// (S256) and a loopback redirect on 127.0.0.1 (RFC 8252). The credentials
// replace the checkout's previous ones, whose tokens are then revoked.
func login(ctx context.Context, out io.Writer, o loginOptions) error {
	if u, err := url.Parse(o.Server); err == nil && u.Scheme == "http" && !isLoopback(u.Hostname()) && !o.InsecureHTTP {
		return fmt.Errorf("--server %s is plain http to another machine: the sign-in and the tokens would cross the network unencrypted. "+
			"Use its https address, or pass --allow-insecure-http if you mean it", o.Server)
	}
	hc := newHTTPClient()
	hc.Timeout = 30 * time.Second
	m, err := discover(ctx, hc, o.Server)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("open the loopback port for the sign-in redirect: %w", err)
	}
	defer ln.Close()
	// The client registers the loopback redirect without a port, which the
	// server matches whatever port a sign-in uses (RFC 8252 §7.3).
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	verifier, state := randomString(32), randomString(16)
	sum := sha256.Sum256([]byte(verifier))
	authURL := func(clientID string) string {
		return m.AuthorizationEndpoint + "?" + url.Values{
			"response_type":         {"code"},
			"client_id":             {clientID},
			"redirect_uri":          {redirect},
			"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
			"code_challenge_method": {"S256"},
			"scope":                 {strings.Join(scopes, " ")},
			"state":                 {state},
			"resource":              {m.Resource},
		}.Encode()
	}
	// A later login of the same checkout keeps its registration, so the
	// consent page offers to continue the connection it holds (profile,
	// slug, seats, invitations) rather than start another agent; a
	// registration the server no longer knows is replaced.
	acct := account{dirs: o.dirs, server: o.Server, checkout: o.Checkout}
	clientID := ""
	if prev, err := acct.load(); err == nil && prev.ClientID != "" && strings.TrimRight(prev.Issuer, "/") == strings.TrimRight(m.Issuer, "/") &&
		knownClient(ctx, hc, authURL(prev.ClientID)) {
		clientID = prev.ClientID
	}
	if clientID == "" {
		if clientID, err = register(ctx, hc, o.Server, m, "http://127.0.0.1/callback", clientName(o.Checkout)); err != nil {
			return err
		}
	}

	done := make(chan callback, 1)
	srv := &http.Server{Handler: callbackHandler(state, m.Issuer, m.IssParameter, done), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	opened := false
	if !o.NoBrowser {
		opened = openBrowser(authURL(clientID)) == nil
	}
	if opened {
		fmt.Fprintf(out, "Opening your browser to connect %s to %s.\nIf it does not open, visit this URL:\n\n  %s\n\n", o.Checkout, o.Server, authURL(clientID))
	} else {
		fmt.Fprintf(out, "To connect %s to %s, open this URL in a browser where you are signed in to osFoundry:\n\n  %s\n\n", o.Checkout, o.Server, authURL(clientID))
	}
	fmt.Fprintf(out, "Waiting for the approval (up to %s)…\n", o.Timeout)

	var cb callback
	select {
	case cb = <-done:
	case <-ctx.Done():
		return errors.New("login cancelled")
	case <-time.After(o.Timeout):
		return fmt.Errorf("no approval arrived within %s; run `osfoundry agent login --server %s` again", o.Timeout, o.Server)
	}
	if cb.err != nil {
		return cb.err
	}
	tr, err := postToken(ctx, hc, o.Server, m.TokenEndpoint, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {cb.code},
		"redirect_uri":  {redirect},
		"client_id":     {clientID},
		"code_verifier": {verifier},
		"resource":      {m.Resource},
	})
	if err != nil {
		return fmt.Errorf("exchange the authorization code: %w", err)
	}
	now := time.Now()
	creds := &credentials{
		Server: o.Server, Checkout: o.Checkout, Resource: m.Resource, Issuer: m.Issuer,
		TokenEndpoint: m.TokenEndpoint, RevocationEndpoint: m.RevocationEndpoint, ClientID: clientID, CreatedAt: now,
	}
	creds.apply(tr, now)
	previous, err := replaceCredentials(ctx, acct, creds)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Connected %s to %s (scopes: %s).\nCredentials: %s\n", o.Checkout, o.Server, creds.Scope, acct.credentialsPath())
	if previous != nil {
		// The old tokens go. When the owner continued the connection, the
		// server revokes only them (they are superseded); when the owner
		// chose a new agent, it ends the old connection, which this
		// checkout no longer holds.
		revoke(ctx, hc, previous)
		fmt.Fprintln(out, "The checkout's previous credentials were revoked.")
	}
	if o.Handle != "" {
		if err := claim(ctx, acct, o.Handle, o.Name); err != nil {
			return fmt.Errorf("signed in, but claiming the profile failed: %w", err)
		}
		c, _ := acct.load()
		fmt.Fprintf(out, "Claimed the profile %s (sender slug %s).\n", o.Handle, c.SenderSlug)
	}
	fmt.Fprintln(out, "Next: osfoundry agent install claude-code")
	return nil
}

// knownClient reports whether the server still knows the client an
// authorization URL names: it shows an unknown one a 400 page, and sends a
// signed-out visitor of a known one to sign in. A server that cannot be
// asked counts as knowing it (the login then fails on its own).
func knownClient(ctx context.Context, hc *http.Client, authURL string) bool {
	probe := *hc
	probe.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return true
	}
	req.Header.Set("User-Agent", userAgent)
	res, err := probe.Do(req)
	if err != nil {
		return true
	}
	res.Body.Close()
	return res.StatusCode != http.StatusBadRequest
}

// clientName names the OAuth client of a checkout: its folder name, for the
// consent and Connections pages, and a digest of its path, so that two
// checkouts with the same folder name stay two agents.
func clientName(checkout string) string {
	sum := sha256.Sum256([]byte(checkout))
	return fmt.Sprintf("osfoundry agent · %s · %x", filepath.Base(checkout), sum[:4])
}

// replaceCredentials saves creds under the account's lock and returns the
// credentials they replace, if any.
func replaceCredentials(ctx context.Context, acct account, creds *credentials) (*credentials, error) {
	unlock, err := lockFile(ctx, acct.lockPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	old, _ := acct.load()
	if err := acct.save(creds); err != nil {
		return nil, fmt.Errorf("save credentials: %w", err)
	}
	return old, nil
}

// claim claims the agent profile and remembers the connection's sender slug.
func claim(ctx context.Context, acct account, handle, name string) error {
	if name == "" {
		name = handle
	}
	c, err := newClient(acct)
	if err != nil {
		return err
	}
	res, err := c.callTool(ctx, "claim_connected_profile", map[string]string{"handle": handle, "display_name": name})
	if err != nil {
		return err
	}
	if res.IsError {
		return errors.New(res.text())
	}
	var p struct {
		SenderSlug string `json:"sender_slug"`
	}
	if err := res.decode(&p); err != nil {
		return err
	}
	return rememberSlug(ctx, acct, p.SenderSlug)
}

// rememberSlug stores the connection's sender slug in its credentials.
func rememberSlug(ctx context.Context, acct account, slug string) error {
	unlock, err := lockFile(ctx, acct.lockPath())
	if err != nil {
		return err
	}
	defer unlock()
	c, err := acct.load()
	if err != nil {
		return err
	}
	c.SenderSlug = slug
	return acct.save(c)
}

// revoke ends a grant at the server (RFC 7009); failures are ignored, the
// owner can still revoke the connection on the Connections page.
func revoke(ctx context.Context, hc *http.Client, c *credentials) {
	if c.RevocationEndpoint == "" || c.RefreshToken == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	form := url.Values{"token": {c.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {c.ClientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.RevocationEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err := hc.Do(req); err == nil {
		res.Body.Close()
	}
}

// callbackHandler answers the loopback redirect once: it checks state and
// iss (RFC 9207; required when the server says it sends it) and hands the
// code, or the refusal, to done.
func callbackHandler(state, issuer string, requireIss bool, done chan<- callback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var cb callback
		switch {
		case q.Get("state") != state:
			http.Error(w, "This sign-in link is stale; run osfoundry agent login again.", http.StatusBadRequest)
			return
		case !q.Has("iss") && requireIss:
			cb.err = fmt.Errorf("the answer carries no iss, which %s always adds: it may not come from that server", issuer)
		case q.Has("iss") && strings.TrimRight(q.Get("iss"), "/") != strings.TrimRight(issuer, "/"):
			cb.err = fmt.Errorf("the answer came from %q, not %q", q.Get("iss"), issuer)
		case q.Get("error") == "access_denied":
			cb.err = errors.New("the connection was denied on the consent page")
		case q.Get("error") != "":
			cb.err = fmt.Errorf("authorization failed: %s: %s", q.Get("error"), q.Get("error_description"))
		case q.Get("code") == "":
			cb.err = errors.New("the redirect carried no authorization code")
		default:
			cb.code = q.Get("code")
		}
		msg := "osFoundry is connected. You can close this tab and return to the terminal."
		if cb.err != nil {
			msg = "osFoundry was not connected: " + cb.err.Error()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>osFoundry</title><p>%s</p>", html.EscapeString(msg))
		select {
		case done <- cb:
		default:
		}
	})
	return mux
}

// openBrowser starts the system's browser on u, an http or https URL (the
// system's opener would hand any other scheme, file: among them, to
// whatever program claims it). It fails where no graphical session is
// available, so the caller prints the URL instead.
func openBrowser(u string) error {
	if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || printable(u) != u {
		return fmt.Errorf("not opening %q in a browser: only http and https URLs are", u)
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no graphical session")
		}
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
