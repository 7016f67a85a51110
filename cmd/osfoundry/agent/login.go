package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

type loginOptions struct {
	dirs         folders
	Server       string // normalized
	Checkout     string
	NoBrowser    bool
	Timeout      time.Duration
	Handle, Name string // when set, claim the agent profile after sign-in
	InsecureHTTP bool   // allow plain http:// to another machine
}

// login connects the checkout with OAuth 2.1 (dynamic registration, PKCE, a
// loopback redirect); the checkout's previous tokens are then revoked.
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
	verifier, state := oauth2.GenerateVerifier(), randomString(16)
	conf := oauthConfig("", redirect, m.AuthorizationEndpoint, m.TokenEndpoint)
	resource := oauth2.SetAuthURLParam("resource", m.Resource)
	authURL := func() string { return conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), resource) }
	// A later login keeps the registration, so the consent page offers to
	// continue the connection rather than start another agent.
	acct := account{dirs: o.dirs, server: o.Server, checkout: o.Checkout}
	if prev, err := acct.load(); err == nil && prev.ClientID != "" && strings.TrimRight(prev.Issuer, "/") == strings.TrimRight(m.Issuer, "/") {
		conf.ClientID = prev.ClientID
		if !knownClient(ctx, hc, authURL()) {
			conf.ClientID = ""
		}
	}
	if conf.ClientID == "" {
		if conf.ClientID, err = register(ctx, hc, o.Server, m, "http://127.0.0.1/callback", clientName(o.Checkout)); err != nil {
			return err
		}
	}

	done := make(chan callback, 1)
	srv := &http.Server{Handler: callbackHandler(state, m.Issuer, m.IssParameter, done), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	opened := false
	if !o.NoBrowser {
		opened = openBrowser(authURL()) == nil
	}
	if opened {
		fmt.Fprintf(out, "Opening your browser to connect %s to %s.\nIf it does not open, visit this URL:\n\n  %s\n\n", o.Checkout, o.Server, authURL())
	} else {
		fmt.Fprintf(out, "To connect %s to %s, open this URL in a browser where you are signed in to osFoundry:\n\n  %s\n\n", o.Checkout, o.Server, authURL())
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
	tok, err := conf.Exchange(tokenContext(ctx, hc), cb.code, oauth2.VerifierOption(verifier), resource)
	if err != nil {
		return fmt.Errorf("exchange the authorization code: %w", tokenError(o.Server, err))
	}
	now := time.Now()
	creds := &credentials{
		Server: o.Server, Checkout: o.Checkout, Resource: m.Resource, Issuer: m.Issuer,
		TokenEndpoint: m.TokenEndpoint, RevocationEndpoint: m.RevocationEndpoint, ClientID: conf.ClientID, CreatedAt: now,
	}
	creds.apply(tok, now)
	previous, err := replaceCredentials(ctx, acct, creds)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Connected %s to %s (scopes: %s).\nCredentials: %s\n", o.Checkout, o.Server, creds.Scope, acct.credentialsPath())
	if previous != nil {
		// For a continued connection the server revokes only the old tokens;
		// otherwise it ends the old connection, which no checkout holds now.
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

// knownClient: the server shows an unknown client a 400 page. A server that
// cannot be asked counts as knowing it (the login then fails on its own).
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

// clientName holds a digest of the checkout's path, so that two checkouts
// with the same folder name stay two agents.
func clientName(checkout string) string {
	sum := sha256.Sum256([]byte(checkout))
	return fmt.Sprintf("osfoundry agent · %s · %x", filepath.Base(checkout), sum[:4])
}

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
