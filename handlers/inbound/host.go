// Package inbound holds the checks on incoming requests that more than one
// front applies (the web app and its OAuth server, the MCP endpoint), so that
// each rule has one definition.
package inbound

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// IsLoopbackHost reports whether a host, or host:port, or [IPv6]:port, names
// this machine: "localhost" (any case) or a loopback IP literal. It is the one
// rule for "loopback" in Host headers, origins and URLs (the MCP endpoint's
// DNS-rebinding guard, plain http to a client's metadata document).
func IsLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// PublicHost is the Host header that names the public origin baseURL
// (host, and port when it has one); "" when baseURL is not a URL.
func PublicHost(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// HostAllowed reports whether a request's Host names this server: the host
// of its configured public origin (publicHost, with the port when the
// origin has one), or loopback on any port. Anything else is another name
// pointed at this address, as DNS rebinding does, and is refused.
func HostAllowed(publicHost, host string) bool {
	return strings.EqualFold(host, publicHost) || IsLoopbackHost(host)
}

// RequireHost answers 421 Misdirected Request to a request whose Host is
// not allowed (HostAllowed), before anything else sees it: every listener
// puts it in front of all its routes.
func RequireHost(publicHost string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !HostAllowed(publicHost, r.Host) {
				w.Header().Set("Cache-Control", "no-store")
				http.Error(w, "Misdirected Request: this server does not answer to that host name.", http.StatusMisdirectedRequest)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
