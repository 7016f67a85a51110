package outbound

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// addressForms is every form the guard must decide, with the reason for its
// decision. allowed is the decision by default; private is the decision
// when the operator allows private targets.
var addressForms = []struct {
	addr             string
	allowed, private bool
	reason           string
}{
	// Public addresses.
	{"93.184.216.34", true, true, "public IPv4"},
	{"8.8.8.8", true, true, "public IPv4"},
	{"172.32.0.1", true, true, "public: just above private 172.16.0.0/12"},
	{"100.128.0.1", true, true, "public: just above CGNAT 100.64.0.0/10"},
	{"198.20.0.1", true, true, "public: just above benchmarking 198.18.0.0/15"},
	{"2606:4700:4700::1111", true, true, "public IPv6 (global unicast 2000::/3)"},
	{"::ffff:93.184.216.34", true, true, "IPv4-mapped form of a public IPv4 address: the kernel dials the IPv4 address"},
	{"64:ff9b::5db8:d822", true, true, "NAT64 (64:ff9b::/96) of public 93.184.216.34"},

	// IPv4 special-purpose registry.
	{"0.0.0.0", false, false, "unspecified (dialed as this host)"},
	{"0.1.2.3", false, false, "this network 0.0.0.0/8"},
	{"127.0.0.1", false, true, "loopback 127.0.0.0/8"},
	{"127.255.255.254", false, true, "loopback 127.0.0.0/8"},
	{"10.0.0.1", false, true, "private 10.0.0.0/8"},
	{"172.16.0.1", false, true, "private 172.16.0.0/12"},
	{"172.31.255.255", false, true, "private 172.16.0.0/12"},
	{"192.168.1.1", false, true, "private 192.168.0.0/16"},
	{"169.254.169.254", false, true, "link-local 169.254.0.0/16 (cloud metadata)"},
	{"100.64.0.1", false, true, "shared address space (CGNAT) 100.64.0.0/10"},
	{"100.127.255.254", false, true, "shared address space (CGNAT) 100.64.0.0/10"},
	{"192.0.0.8", false, true, "IETF protocol assignments 192.0.0.0/24"},
	{"192.0.2.1", false, true, "documentation TEST-NET-1 192.0.2.0/24"},
	{"198.51.100.7", false, true, "documentation TEST-NET-2 198.51.100.0/24"},
	{"203.0.113.9", false, true, "documentation TEST-NET-3 203.0.113.0/24"},
	{"198.18.0.1", false, true, "benchmarking 198.18.0.0/15"},
	{"198.19.255.255", false, true, "benchmarking 198.18.0.0/15"},
	{"192.88.99.1", false, true, "deprecated 6to4 relay anycast 192.88.99.0/24"},
	{"192.31.196.1", false, true, "AS112-v4 192.31.196.0/24"},
	{"192.52.193.1", false, true, "AMT 192.52.193.0/24"},
	{"192.175.48.1", false, true, "AS112 direct delegation 192.175.48.0/24"},
	{"224.0.0.1", false, false, "multicast 224.0.0.0/4"},
	{"239.255.255.250", false, false, "multicast 224.0.0.0/4"},
	{"240.0.0.1", false, true, "reserved 240.0.0.0/4"},
	{"255.255.255.255", false, false, "limited broadcast"},

	// IPv6 special-purpose registry.
	{"::", false, false, "unspecified"},
	{"::1", false, true, "loopback"},
	{"fe80::1", false, true, "link-local fe80::/10"},
	{"fe80::1%eth0", false, true, "link-local fe80::/10 with a zone"},
	{"fc00::1", false, true, "unique-local fc00::/7"},
	{"fd12:3456::1", false, true, "unique-local fc00::/7"},
	{"fec0::1", false, true, "deprecated site-local fec0::/10"},
	{"ff02::1", false, false, "multicast ff00::/8"},
	{"100::1", false, true, "discard-only 100::/64"},
	{"2001:db8::1", false, true, "documentation 2001:db8::/32"},
	{"3fff::1", false, true, "documentation 3fff::/20"},
	{"2001:2::1", false, true, "benchmarking 2001:2::/48"},
	{"2001:10::1", false, true, "ORCHID 2001:10::/28"},
	{"2620:4f:8000::1", false, true, "AS112 direct delegation 2620:4f:8000::/48"},
	{"5f00::1", false, true, "SRv6 SIDs 5f00::/16 (outside global unicast)"},

	// IPv4 addresses embedded in IPv6.
	{"::ffff:127.0.0.1", false, true, "IPv4-mapped loopback"},
	{"::ffff:10.0.0.1", false, true, "IPv4-mapped private"},
	{"::ffff:169.254.169.254", false, true, "IPv4-mapped link-local"},
	{"::ffff:0.0.0.0", false, false, "IPv4-mapped unspecified"},
	{"::127.0.0.1", false, true, "IPv4-compatible (deprecated ::/96) loopback"},
	{"::a9fe:a9fe", false, true, "IPv4-compatible (deprecated ::/96) link-local"},
	{"::5db8:d822", false, true, "IPv4-compatible (deprecated ::/96), even of a public address"},
	{"64:ff9b::a9fe:a9fe", false, true, "NAT64 (64:ff9b::/96) of link-local 169.254.169.254"},
	{"64:ff9b::7f00:1", false, true, "NAT64 (64:ff9b::/96) of loopback 127.0.0.1"},
	{"64:ff9b::a00:1", false, true, "NAT64 (64:ff9b::/96) of private 10.0.0.1"},
	{"64:ff9b::6440:1", false, true, "NAT64 (64:ff9b::/96) of CGNAT 100.64.0.1"},
	{"64:ff9b::c612:1", false, true, "NAT64 (64:ff9b::/96) of benchmarking 198.18.0.1"},
	{"64:ff9b::e000:1", false, true, "NAT64 (64:ff9b::/96) of multicast 224.0.0.1"},
	{"64:ff9b:1::a9fe:a9fe", false, true, "local-use NAT64 64:ff9b:1::/48 (operator-chosen embedding), refused whole"},
	{"64:ff9b:1:5db8:d800:22::", false, true, "local-use NAT64 64:ff9b:1::/48, refused whole even of a public address"},
	{"2002:a9fe:a9fe::1", false, true, "6to4 2002::/16 of link-local 169.254.169.254"},
	{"2002:7f00:1::1", false, true, "6to4 2002::/16 of loopback"},
	{"2002:c0a8:101::1", false, true, "6to4 2002::/16 of private 192.168.1.1"},
	{"2002:5db8:d822::1", false, true, "6to4 2002::/16 (deprecated), refused whole even of a public address"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, true, "Teredo 2001::/32"},
	{"2001:0:a9fe:a9fe::1", false, true, "Teredo 2001::/32 with a link-local server"},
}

func TestGuardAddressForms(t *testing.T) {
	deny, allowPrivate := NewGuard(Options{}), NewGuard(Options{AllowPrivate: true})
	for _, tc := range addressForms {
		ap := netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443)
		for _, g := range []struct {
			name  string
			guard *Guard
			want  bool
		}{{"public only", deny, tc.allowed}, {"private allowed", allowPrivate, tc.private}} {
			err := g.guard.Check(ap)
			if (err == nil) != g.want {
				t.Errorf("%s, %s (%s): got err %v, want allowed=%v", g.name, tc.addr, tc.reason, err, g.want)
			}
			if err != nil && !errors.Is(err, ErrNotPublic) && !errors.Is(err, ErrNotUnicast) {
				t.Errorf("%s, %s: error %v wraps neither ErrNotPublic nor ErrNotUnicast", g.name, tc.addr, err)
			}
			// The dial-time form: the address as the dialer passes it to Control.
			network := "tcp6"
			if netip.MustParseAddr(tc.addr).Unmap().Is4() {
				network = "tcp4"
			}
			if cerr := g.guard.Control(network, ap.String(), nil); (cerr == nil) != (err == nil) {
				t.Errorf("%s, %s: Control says %v, Check says %v", g.name, ap, cerr, err)
			}
		}
	}
	if len(addressForms) < 30 {
		t.Fatalf("only %d address forms", len(addressForms))
	}
}

func TestGuardControlRefusesNonTCP(t *testing.T) {
	if err := NewGuard(Options{AllowPrivate: true}).Control("udp4", "93.184.216.34:53", nil); err == nil {
		t.Fatal("a UDP dial passed the guard")
	}
	if err := NewGuard(Options{}).Control("tcp4", "example.com:443", nil); err == nil {
		t.Fatal("an unresolved name passed the guard")
	}
}

// server is a loopback test server that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int32
	ap   netip.AddrPort
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	s.ap = netip.MustParseAddrPort(s.Listener.Addr().String())
	return s
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") } //nolint:errcheck

func followAll(*http.Request, []*http.Request) error { return nil }

// TestNameResolvingToLoopbackIsRefusedAtDial: the URL names a host, not an
// address; the guard refuses the address it resolves to.
func TestNameResolvingToLoopbackIsRefusedAtDial(t *testing.T) {
	srv := newServer(t, ok)
	url := "http://localhost:" + itoa(srv.ap.Port()) + "/"
	_, err := NewClient(Options{}).Get(url)
	if !errors.Is(err, ErrNotPublic) {
		t.Fatalf("GET %s: %v, want ErrNotPublic", url, err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("the server was reached %d times", n)
	}
	// The operator's flag lets it through.
	resp, err := NewClient(Options{AllowPrivate: true}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestRedirectHopIsGuarded: a server on the allow-list redirects to other
// private addresses; each hop is dialed through the guard and refused.
func TestRedirectHopIsGuarded(t *testing.T) {
	other := newServer(t, ok)
	var target string
	allowed := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, target, http.StatusFound)
			return
		}
		ok(w, r)
	})
	client := NewClient(Options{Allow: []netip.AddrPort{allowed.ap}, CheckRedirect: followAll})

	resp, err := client.Get(allowed.URL + "/")
	if err != nil {
		t.Fatalf("the allowed address itself: %v", err)
	}
	resp.Body.Close()

	for _, hop := range []string{
		other.URL + "/", // same address, another port
		"http://127.0.0.2:" + itoa(allowed.ap.Port()) + "/", // another loopback address, same port
		"http://localhost:" + itoa(other.ap.Port()) + "/",   // a name for a private address
		"http://[::ffff:127.0.0.1]:" + itoa(other.ap.Port()) + "/",
	} {
		target = hop
		_, err := client.Get(allowed.URL + "/hop")
		if !errors.Is(err, ErrNotPublic) {
			t.Errorf("redirect to %s: %v, want ErrNotPublic", hop, err)
		}
	}
	if n := other.hits.Load(); n != 0 {
		t.Fatalf("the redirect target was reached %d times", n)
	}
}

// TestNoRedirectByDefault: a client without CheckRedirect (webhook
// deliveries) returns the 3xx response and goes nowhere else.
func TestNoRedirectByDefault(t *testing.T) {
	other := newServer(t, ok)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/", http.StatusFound)
	})
	resp, err := NewClient(Options{AllowPrivate: true}).Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || other.hits.Load() != 0 {
		t.Fatalf("status %d, redirect target reached %d times", resp.StatusCode, other.hits.Load())
	}
}

func TestReadBody(t *testing.T) {
	if b, err := ReadBody(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Fatalf("body at the limit: %q %v", b, err)
	}
	if _, err := ReadBody(strings.NewReader("123456"), 5); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("body over the limit: %v", err)
	}
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }
