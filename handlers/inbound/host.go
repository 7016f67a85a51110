// Package inbound holds the checks on incoming requests that several fronts apply.
package inbound

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// IsLoopbackHost is the one rule for "loopback": "localhost" or a loopback IP,
// with or without a port.
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

// PublicHost is the Host that names baseURL ("" when it is not a URL).
func PublicHost(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// HostAllowed accepts the public origin's host or loopback; any other name
// pointed at this address, as DNS rebinding does, is refused.
func HostAllowed(publicHost, host string) bool {
	return strings.EqualFold(host, publicHost) || IsLoopbackHost(host)
}

// RequireHost answers 421 to a Host not allowed, before anything else sees it.
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
