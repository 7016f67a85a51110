// Package outbound makes the server's outgoing requests, checking each
// connection at dial time (after DNS, on every hop) against SSRF.
package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"

	"code.dny.dev/ssrf"
)

// ErrNotPublic is wrapped by a refused address that is not public internet,
// or a translation address (NAT64, 6to4, Teredo, IPv4-mapped) standing for one.
var ErrNotPublic = errors.New("the address is not a public internet address (the server's operator can allow private targets)")

// ErrNotUnicast is an address that is never a host, refused even when private
// targets are allowed.
var ErrNotUnicast = errors.New("the address is not a unicast host address")

// public is the IANA special-purpose registries' check, IPv4 and IPv6.
var public = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// nat64 (RFC 6052) embeds the IPv4 address that decides; the local-use prefix
// (RFC 8215) puts it anywhere, so it stays refused whole.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// thisNetwork is 0.0.0.0/8: "this host on this network", which Linux dials as loopback.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// broadcast is the limited broadcast address.
var broadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// Guard decides which addresses outgoing connections may reach; the zero Guard
// refuses every non-public one.
type Guard struct {
	allowPrivate bool
	allow        []netip.AddrPort
}

// NewGuard returns the guard for o.
func NewGuard(o Options) *Guard {
	g := &Guard{allowPrivate: o.AllowPrivate}
	for _, ap := range o.Allow {
		g.allow = append(g.allow, normalize(ap))
	}
	return g
}

// Check says why ap is refused (ErrNotPublic, ErrNotUnicast), or nil.
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

// Control runs on the resolved address about to be dialed, so a name that
// re-resolves to a refused address is caught. TCP only.
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

// normalize unmaps IPv4-mapped addresses (what the kernel connects to) and drops zones.
func normalize(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
}
