package oauth

import (
	"fmt"
	"net/url"
	"strings"
)

// maxRedirectURILength bounds each registered redirect URI.
const maxRedirectURILength = 2000

// MatchRedirectURI matches exactly, or for http loopback in all but the port
// (RFC 8252 §7.3): native clients listen on any free port.
func MatchRedirectURI(registered []string, requested string) bool {
	if requested == "" {
		return false
	}
	for _, r := range registered {
		if r == requested || loopbackMatch(r, requested) {
			return true
		}
	}
	return false
}

// loopbackMatch compares two http loopback URIs ignoring the port.
func loopbackMatch(registered, requested string) bool {
	if strings.Contains(registered, "#") || strings.Contains(requested, "#") {
		return false
	}
	a, err := url.Parse(registered)
	if err != nil {
		return false
	}
	b, err := url.Parse(requested)
	if err != nil {
		return false
	}
	if a.Scheme != "http" || b.Scheme != "http" || a.Opaque != "" || b.Opaque != "" ||
		a.User != nil || b.User != nil || a.Fragment != "" || b.Fragment != "" || b.RawFragment != "" {
		return false
	}
	host := a.Hostname()
	if !isLoopbackLiteral(host) || b.Hostname() != host {
		return false
	}
	if p := b.Port(); p != "" && !validPort(p) {
		return false
	}
	return a.EscapedPath() == b.EscapedPath() && a.RawQuery == b.RawQuery && a.ForceQuery == b.ForceQuery
}

// isLoopbackLiteral is true for exactly the loopback host names RFC 8252 names.
func isLoopbackLiteral(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

func validPort(p string) bool {
	if len(p) > 5 {
		return false
	}
	n := 0
	for _, r := range p {
		if r < '0' || r > '9' {
			return false
		}
		n = n*10 + int(r-'0')
	}
	return n >= 1 && n <= 65535
}

// ValidateRedirectURI allows https, http on loopback, or a private-use scheme;
// scripting and local-file schemes are refused.
func ValidateRedirectURI(raw string) error {
	if raw == "" || len(raw) > maxRedirectURILength {
		return fmt.Errorf("must be 1 to %d characters", maxRedirectURILength)
	}
	if strings.ContainsAny(raw, " \t\r\n\\") {
		return fmt.Errorf("must not contain spaces or backslashes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("is not a valid URI")
	}
	if u.Scheme == "" {
		return fmt.Errorf("must be an absolute URI with a scheme")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("must not contain a fragment")
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("must name a host")
		}
	case "http":
		if !isLoopbackLiteral(u.Hostname()) {
			return fmt.Errorf("may use http only on a loopback host (localhost, 127.0.0.1 or [::1]); use https otherwise")
		}
	case "javascript", "data", "file", "vbscript", "about", "blob", "filesystem", "ws", "wss":
		return fmt.Errorf("must not use the %s: scheme", scheme)
	default:
		// A private-use scheme of a native app.
	}
	if u.User != nil {
		return fmt.Errorf("must not contain a user name or password")
	}
	return nil
}

// redirectHost is what the consent page shows as where the browser will go.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	switch {
	case u.Host != "":
		if u.Scheme == "https" || u.Scheme == "http" {
			return u.Host
		}
		return u.Scheme + "://" + u.Host
	default:
		return u.Scheme + ":" + strings.TrimPrefix(u.Opaque+u.Path, "//")
	}
}

// withParams appends query parameters to a redirect URI, keeping its own.
func withParams(raw string, params url.Values) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			if v != "" {
				q.Set(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
