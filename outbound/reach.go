package outbound

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// Unreachable warns a form when every address of rawURL's host is refused; nil
// when one may be reached or the name does not resolve (dial time decides).
func (g *Guard) Unreachable(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		port = p
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", u.Hostname()); err != nil {
			return nil
		}
	}
	var refused []error
	for _, a := range addrs {
		err := g.Check(netip.AddrPortFrom(a, uint16(port)))
		if err == nil {
			return nil
		}
		refused = append(refused, err)
	}
	return errors.Join(refused...)
}
