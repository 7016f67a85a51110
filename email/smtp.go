// Package email composes the emails the store queues and sends its outbox over
// SMTP from every replica, under a lease, retrying with backoff.
package email

import (
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// TLS modes of an SMTP server.
const (
	// TLSStartTLS refuses a server without STARTTLS (smtp://, the default).
	TLSStartTLS = "starttls"
	// TLSNone sends in clear text, for a local relay (smtp://…?tls=none).
	TLSNone = "none"
	// TLSImplicit speaks TLS from the first byte (smtps://).
	TLSImplicit = "tls"
)

// SMTP is the server email goes through, and the sender address.
type SMTP struct {
	Host     string
	Port     int
	TLS      string
	Username string
	Password string
	// From is the sender address of every message.
	From string
}

// ParseSMTP reads an SMTP URL (ParseSMTPURL) and the sender address (ParseFrom).
func ParseSMTP(raw, from string) (SMTP, error) {
	s, err := ParseSMTPURL(raw)
	if err != nil {
		return SMTP{}, err
	}
	if s.From, err = ParseFrom(from); err != nil {
		return SMTP{}, err
	}
	return s, nil
}

// ParseSMTPURL reads smtp://user:pass@host:port?tls=starttls|none or smtps://…;
// a refusal never repeats the password.
func ParseSMTPURL(raw string) (SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return SMTP{}, fmt.Errorf("not a URL; write it as smtp://user:password@host:587 or smtps://user:password@host:465")
	}
	var s SMTP
	def := 0
	switch u.Scheme {
	case "smtp":
		s.TLS, def = TLSStartTLS, 587
		switch v := u.Query().Get("tls"); v {
		case "", TLSStartTLS:
		case TLSNone:
			s.TLS, def = TLSNone, 25
		default:
			return SMTP{}, fmt.Errorf("tls=%q: use tls=starttls (the default) or tls=none", v)
		}
	case "smtps":
		s.TLS, def = TLSImplicit, 465
		if v := u.Query().Get("tls"); v != "" && v != TLSImplicit {
			return SMTP{}, fmt.Errorf("tls=%q: smtps:// always speaks TLS; use smtp://…?tls=%s for a server without it", v, v)
		}
	default:
		return SMTP{}, fmt.Errorf("scheme %q: use smtp:// (STARTTLS, or ?tls=none) or smtps:// (TLS)", u.Scheme)
	}
	for k := range u.Query() {
		if k != "tls" {
			return SMTP{}, fmt.Errorf("unknown parameter %q: the only one is tls", k)
		}
	}
	s.Host = u.Hostname()
	if s.Host == "" {
		return SMTP{}, fmt.Errorf("no host: write it as %s://host:port", u.Scheme)
	}
	s.Port = def
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return SMTP{}, fmt.Errorf("port %q: use a number from 1 to 65535", p)
		}
		s.Port = n
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	if u.Path != "" && u.Path != "/" {
		return SMTP{}, fmt.Errorf("a path (%q) means nothing here: write it as %s://host:port", u.Path, u.Scheme)
	}
	return s, nil
}

// ParseFrom reads the sender address, with or without a name.
func ParseFrom(from string) (string, error) {
	a, err := mail.ParseAddress(from)
	if err != nil || strings.ContainsAny(from, "\r\n") {
		return "", fmt.Errorf("%q is not an address: give the sender's, like osfoundry@example.com or \"osFoundry <osfoundry@example.com>\"", from)
	}
	return a.String(), nil
}

// Addr is the server's host:port.
func (s SMTP) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// sendTimeout bounds each step of talking to the SMTP server.
const sendTimeout = 20 * time.Second

// client is a go-email client for the server.
func (s SMTP) client() (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithPort(s.Port), gomail.WithTimeout(sendTimeout)}
	switch s.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.Username != "" {
		auth := gomail.SMTPAuthAutoDiscover
		if s.TLS == TLSNone {
			// The operator chose a relay without TLS: PLAIN over it is theirs.
			auth = gomail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(s.Username), gomail.WithPassword(s.Password))
	}
	return gomail.NewClient(s.Host, opts...)
}
