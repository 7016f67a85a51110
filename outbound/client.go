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

// DefaultTimeout bounds a whole request when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxResponseHeaderBytes caps the headers of a response.
const maxResponseHeaderBytes = 32 << 10

// Options configure the guard and its client; zero reaches public addresses
// only and follows no redirect.
type Options struct {
	// AllowPrivate lets connections reach non-public addresses; unspecified,
	// multicast and broadcast stay refused.
	AllowPrivate bool
	// Allow lists exact address:port pairs that may be reached anyway (tests).
	Allow []netip.AddrPort
	// Timeout bounds a whole request, redirects and body included.
	Timeout time.Duration
	// CheckRedirect nil follows none (webhook deliveries record the 3xx); each
	// followed hop passes the guard again.
	CheckRedirect func(req *http.Request, via []*http.Request) error
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// NewDialer's Control checks every connection against the address actually
// dialed: each address of a name, each hop, each reconnection.
func NewDialer(o Options) *net.Dialer {
	return &net.Dialer{Timeout: o.timeout(), Control: NewGuard(o).Control}
}

// NewTransport uses no proxy, which would connect past the guard, and bounds
// the handshake and headers.
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

// NewClient is the guarded client for outgoing requests.
func NewClient(o Options) *http.Client {
	check := o.CheckRedirect
	if check == nil {
		check = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return &http.Client{Timeout: o.timeout(), Transport: NewTransport(o), CheckRedirect: check}
}

// ErrTooLarge is wrapped by ReadBody's error for a body over its limit.
var ErrTooLarge = errors.New("the response body is too large")

// ReadBody reads at most limit bytes; longer is ErrTooLarge, never a truncated body.
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
