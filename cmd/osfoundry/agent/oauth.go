package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// scopes is what login asks for; the owner may narrow it on the consent page.
var scopes = []string{"osfoundry:read", "osfoundry:write"}

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

// oauthConfig is a public client: its id goes in the form, with no secret.
func oauthConfig(clientID, redirect, authURL, tokenURL string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:    clientID,
		RedirectURL: redirect,
		Scopes:      scopes,
		Endpoint:    oauth2.Endpoint{AuthURL: authURL, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams},
	}
}

// tokenContext has x/oauth2 send its requests through hc, with our headers.
func tokenContext(ctx context.Context, hc *http.Client) context.Context {
	c := *hc
	c.Transport = tokenHeaders{hc.Transport}
	return context.WithValue(ctx, oauth2.HTTPClient, &c)
}

type tokenHeaders struct{ base http.RoundTripper }

func (t tokenHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept", "application/json")
	r.Header.Set("User-Agent", userAgent)
	if t.base == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return t.base.RoundTrip(r)
}

func (cr *credentials) apply(tok *oauth2.Token, now time.Time) {
	cr.AccessToken = tok.AccessToken
	if tok.RefreshToken != "" {
		cr.RefreshToken = tok.RefreshToken
	}
	if sc, _ := tok.Extra("scope").(string); sc != "" {
		cr.Scope = sc
	}
	life := time.Duration(tok.ExpiresIn) * time.Second
	if life <= 0 {
		life = 5 * time.Minute
	}
	cr.ExpiresAt = now.Add(life)
}

// tokenError words a failed token request for the user.
func tokenError(server string, err error) error {
	var re *oauth2.RetrieveError
	var ue *url.Error
	switch {
	case errors.As(err, &re):
		switch {
		case json.Unmarshal(re.Body, &struct{}{}) != nil:
			return fmt.Errorf("token endpoint answered HTTP %d with %q", re.Response.StatusCode, truncate(string(re.Body), 200))
		case re.ErrorCode == "invalid_grant":
			return &revokedError{Server: server}
		case re.ErrorCode != "":
			return fmt.Errorf("token endpoint: %s: %s", re.ErrorCode, re.ErrorDescription)
		}
		return fmt.Errorf("token endpoint answered HTTP %d without a token", re.Response.StatusCode)
	case errors.As(err, &ue):
		return &unreachableError{Server: server, Err: ue}
	}
	return fmt.Errorf("token endpoint: %w", err)
}
