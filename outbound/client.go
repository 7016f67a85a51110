package outbound

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// DefaultTimeout bounds a whole request when Options.Timeout is zero (the
// webhook delivery timeout).
const DefaultTimeout = 10 * time.Second

// maxResponseHeaderBytes caps the headers of a response.
const maxResponseHeaderBytes = 32 << 10

// Options configure the guard and the client built on it. The zero Options
// give a client that reaches public addresses only, within DefaultTimeout,
// and follows no redirect.
type Options struct {
	// AllowPrivate lets connections reach addresses that are not public
	// (loopback, private networks, link-local …): the operator's
	// --allow-private-targets. Unspecified, multicast and broadcast addresses
	// stay refused.
	AllowPrivate bool
	// Allow lists exact address:port pairs that may be reached even though
	// they are not public. Tests list their own loopback server here; any
	// other address, a redirect hop's included, is still refused.
	Allow []netip.AddrPort
	// Timeout bounds a whole request, redirects and reading the body
	// included (DefaultTimeout when zero).
	Timeout time.Duration
	// CheckRedirect decides each redirect as http.Client.CheckRedirect does.
	// Nil follows none: the 3xx response itself is returned (webhook
	// deliveries record it). Every hop that is followed passes the guard again.
	CheckRedirect func(req *http.Request, via []*http.Request) error
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// NewDialer returns a TCP dialer whose Control is the guard of o, so every
// connection attempt (each address of a name, each redirect hop, each
// reconnection) is checked against the address actually dialed.
func NewDialer(o Options) *net.Dialer {
	return &net.Dialer{Timeout: o.timeout(), Control: NewGuard(o).Control}
}

// NewTransport returns a transport that dials through NewDialer(o), uses no
// proxy (a proxy would connect on the server's behalf, past the guard), and
// bounds the handshake, the wait for headers and their size.
func NewTransport(o Options) *http.Transport {
	t := o.timeout()
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            NewDialer(o).DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    t,
		ResponseHeaderTimeout:  t,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
	}
}

// NewClient returns the HTTP client for outgoing requests: the guarded
// transport, the whole-request timeout, and o.CheckRedirect (no redirect
// followed when nil).
func NewClient(o Options) *http.Client {
	check := o.CheckRedirect
	if check == nil {
		check = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return &http.Client{Timeout: o.timeout(), Transport: NewTransport(o), CheckRedirect: check}
}

// ErrTooLarge is wrapped by ReadBody's error for a body over its limit.
var ErrTooLarge = errors.New("the response body is too large")

// ReadBody reads a response body of at most limit bytes; a longer one is an
// error wrapping ErrTooLarge, never a silently truncated body.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrTooLarge, limit)
	}
	return b, nil
}
