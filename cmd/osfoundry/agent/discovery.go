package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// serverMeta is the protected resource (RFC 9728) and its authorization server (RFC 8414).
type serverMeta struct {
	Resource              string   `json:"-"`
	Scopes                []string `json:"-"`
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	RevocationEndpoint    string   `json:"revocation_endpoint"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
	// IssParameter (RFC 9207): a response without iss is then refused.
	IssParameter bool `json:"authorization_response_iss_parameter_supported"`
}

// wellKnown inserts suffix between an URL's origin and its path (RFC 8414 §3.1).
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

// discover checks the metadata before any of it is used: the resource is the
// server's own (RFC 9728 §3.3) and every endpoint an https URL on the issuer's
// origin, so no other scheme reaches the browser and no other host the tokens.
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

// sameResource ignores a trailing slash.
func sameResource(got, want string) bool {
	g, err1 := url.Parse(got)
	w, err2 := url.Parse(want)
	return err1 == nil && err2 == nil && g.Scheme == w.Scheme && strings.EqualFold(g.Host, w.Host) &&
		strings.TrimRight(g.Path, "/") == strings.TrimRight(w.Path, "/") && g.RawQuery == "" && g.Fragment == "" && g.User == nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
