// Package inbound holds the checks on incoming requests that more than one
// front applies (the web app and its OAuth server, the MCP endpoint), so that
// each rule has one definition.
package inbound

import (
	"net"
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
