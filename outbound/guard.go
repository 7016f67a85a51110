// Package outbound makes the server's outgoing HTTP requests (client ID
// metadata documents, webhook deliveries) and guards them against server-side
// request forgery: every connection attempt is checked at dial time, after DNS
// resolution and on every redirect hop, and one to an address that is not
// public internet is refused unless the operator allows private targets.
package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"

	"code.dny.dev/ssrf"
)

// ErrNotPublic is wrapped by every refused connection attempt: the address is
// loopback, private, link-local, shared (CGNAT), unique-local, site-local,
// reserved, for documentation or benchmarking, or another special-purpose
// range, or a NAT64, 6to4, Teredo, IPv4-mapped or IPv4-compatible address
// standing for one.
var ErrNotPublic = errors.New("the address is not a public internet address (the server's operator can allow private targets)")

// ErrNotUnicast is wrapped by a refused attempt to reach an address that is
// never a host to connect to (unspecified, multicast, broadcast), refused even
// when private targets are allowed.
var ErrNotUnicast = errors.New("the address is not a unicast host address")

// public is the special-purpose registry check: every IPv4 range of the IANA
// IPv4 special-purpose registry plus multicast and reserved, and every IPv6
// address outside global unicast 2000::/3 or inside a special-purpose range
// there (Teredo 2001::/32, 6to4 2002::/16, documentation, benchmarking …).
var public = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// nat64 is the well-known NAT64 prefix (RFC 6052): its last 32 bits are the
// IPv4 address the translator connects to, so that address decides. The
// local-use prefix 64:ff9b:1::/48 (RFC 8215) places the IPv4 address where
// its operator chooses and stays refused as a whole, as do the deprecated
// 6to4 and Teredo ranges.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// thisNetwork is 0.0.0.0/8: "this host on this network", which Linux dials as loopback.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// broadcast is the limited broadcast address.
var broadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// Guard decides which addresses outgoing connections may reach. Its Control
// method is a net.Dialer's Control function. The zero Guard refuses every
// address that is not public.
type Guard struct {
	allowPrivate bool
	allow        []netip.AddrPort
}

// NewGuard returns the guard for o: public addresses only, unless
// o.AllowPrivate, plus the exact address:port pairs of o.Allow.
func NewGuard(o Options) *Guard {
	g := &Guard{allowPrivate: o.AllowPrivate}
	for _, ap := range o.Allow {
		g.allow = append(g.allow, normalize(ap))
	}
	return g
}

// Check reports why a connection to ap is refused, or nil when it may be made.
// Refusals wrap ErrNotPublic or ErrNotUnicast.
func (g *Guard) Check(ap netip.AddrPort) error {
	ap = normalize(ap)
	if slices.Contains(g.allow, ap) {
		return nil
	}
	ip := ap.Addr()
	switch {
	case !ip.IsValid():
		return fmt.Errorf("%w: no address", ErrNotUnicast)
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return fmt.Errorf("%s is unspecified (this host): %w", ip, ErrNotUnicast)
	case ip.IsMulticast():
		return fmt.Errorf("%s is multicast: %w", ip, ErrNotUnicast)
	case ip == broadcast:
		return fmt.Errorf("%s is broadcast: %w", ip, ErrNotUnicast)
	case g.allowPrivate:
		return nil
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if err := public.SafeAddr(v4); err != nil {
			return fmt.Errorf("%s is NAT64 for %s: %w: %w", ip, v4, ErrNotPublic, err)
		}
		return nil
	}
	if err := public.SafeAddr(ip); err != nil {
		return fmt.Errorf("%w: %w", ErrNotPublic, err)
	}
	return nil
}

// Control is the net.Dialer Control function: it runs once per connection
// attempt with the resolved address about to be dialed, so a name that
// resolves (or re-resolves) to a refused address is caught, as is a redirect
// to one. Only TCP is allowed.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("outbound: network %q is not TCP", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: %q is not an address:port: %w", address, err)
	}
	if err := g.Check(ap); err != nil {
		return fmt.Errorf("outbound: %w", err)
	}
	return nil
}

// normalize makes an IPv4-mapped IPv6 address its IPv4 address (the one the
// kernel connects to) and drops any zone.
func normalize(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
}
